#include "endpoint.h"
#include "pbuf_chain.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../ipc/sync.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../syscall/sys.h"

#include <ktl/result.h>
#include <lwip/tcp.h>

#include <new>

namespace net {

// A byte ring with one producer and one consumer; `head` and `tail` only grow (wrapping at
// 2^32), so full and empty need no extra flag.
struct Ring {
    uint8_t* data = nullptr;
    uint32_t cap = 0;
    uint32_t head = 0; // next byte to write
    uint32_t tail = 0; // next byte to read
    uint32_t used() const { return head - tail; }
    uint32_t room() const { return cap - used(); }
    uint32_t put(const uint8_t* src, uint32_t n) {
        n = n < room() ? n : room();
        for (uint32_t i = 0; i < n; ++i)
            data[(head + i) % cap] = src[i];
        head += n;
        return n;
    }
    uint32_t get(uint8_t* dst, uint32_t n) {
        n = n < used() ? n : used();
        for (uint32_t i = 0; i < n; ++i)
            dst[i] = data[(tail + i) % cap];
        tail += n;
        return n;
    }
    // The longest run of queued bytes that is contiguous in memory.
    uint32_t contiguous() const {
        uint32_t start = tail % cap;
        uint32_t run = cap - start;
        return run < used() ? run : used();
    }
};

struct Endpoint::Stream {
    Endpoint* owner = nullptr;
    uint32_t slot = 0;
    tcp_pcb* pcb = nullptr;   // net task only; nullptr once lwIP let go of the connection
    pbuf* pending = nullptr;  // received, not yet in the ring (net task only)
    Ring rx, tx;
    bool fresh = true;        // not yet reported to the task
    bool peer_closed = false; // FIN received (and queued after the buffered bytes)
    bool reset = false;       // connection gone
    bool app_closed = false;  // the task closed its handle
    bool app_abort = false;
    bool marked = false;      // a change waits for the task's next poll
    bool tx_was_full = false; // the task was refused room: report when there is some
    uint32_t peer_ip = 0;     // who connected (reported with every event)
    uint16_t peer_port = 0;
    uint64_t tx_progress_ns = 0; // last time the peer acknowledged data, or nothing was owed
    // The ring bytes follow the struct in the same heap block: rx, then tx.
    uint8_t* storage() { return reinterpret_cast<uint8_t*>(this + 1); }
};

namespace {

err_t on_recv(void* arg, tcp_pcb*, pbuf* p, err_t err);
err_t on_sent(void* arg, tcp_pcb*, u16_t);
void on_error(void* arg, err_t);

void detach(tcp_pcb* pcb) {
    tcp_arg(pcb, nullptr);
    tcp_recv(pcb, nullptr);
    tcp_sent(pcb, nullptr);
    tcp_err(pcb, nullptr);
}

} // namespace

void Endpoint::configure(uint16_t port, ipc::Event* notify, uint32_t max_streams) {
    m_port = port;
    m_notify = notify;
    m_max = max_streams && max_streams < kMaxStreams ? max_streams : kMaxStreams;
}

void Endpoint::mark(Stream& s) {
    // Net task side: the flag and the signal together, so a poll never misses a change.
    arch::IrqGuard guard;
    s.marked = true;
    if (m_notify)
        m_notify->signal();
}

err_t Endpoint::on_accept(void* arg, tcp_pcb* pcb, err_t err) {
    auto& ep = *static_cast<Endpoint*>(arg);
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    uint32_t slot = ep.m_max;
    for (uint32_t i = 0; i < ep.m_max; ++i)
        if (!ep.m_streams[i]) {
            slot = i;
            break;
        }
    auto mem = slot < ep.m_max ? kheap::alloc(sizeof(Stream) + kRxRing + kTxRing)
                               : ktl::Result<void*>(ktl::Error::Full);
    if (!mem) {
        // Full table or no memory: refuse this one, keep serving the others.
        ++ep.m_stats.refused;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    auto* s = new (*mem) Stream;
    s->owner = &ep;
    s->slot = slot;
    s->pcb = pcb;
    s->peer_ip = ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip));
    s->tx_progress_ns = clock::monotonic_ns();
    s->peer_port = pcb->remote_port;
    s->rx = { s->storage(), kRxRing };
    s->tx = { s->storage() + kRxRing, kTxRing };
    tcp_arg(pcb, s);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_error);
    tcp_nagle_disable(pcb); // replies are written whole; waiting for an ACK only adds latency
    {
        arch::IrqGuard guard;
        ep.m_gen[slot] = static_cast<uint16_t>(ep.m_gen[slot] + 1);
        ep.m_streams[slot] = s;
        ++ep.m_stats.accepted;
    }
    ep.mark(*s);
    return ERR_OK;
}

namespace {

using Stream = Endpoint::Stream;

// Moves what the receive ring has room for from lwIP's buffers into it, then opens TCP's
// window by exactly that much.
void fill_rx(Stream& s) {
    uint32_t moved = 0;
    for (int guard = 0; guard < 64 && s.pending; ++guard) {
        s.pending = net::skip_empty(s.pending);
        if (!s.pending)
            break;
        uint32_t n;
        {
            arch::IrqGuard irq;
            n = s.rx.put(static_cast<const uint8_t*>(s.pending->payload), s.pending->len);
        }
        if (n == 0)
            break;
        moved += n;
        s.pending = pbuf_free_header(s.pending, static_cast<u16_t>(n));
    }
    if (moved == 0)
        return;
    if (s.pcb)
        tcp_recved(s.pcb, static_cast<u16_t>(moved));
    s.owner->mark(s);
}

err_t on_recv(void* arg, tcp_pcb*, pbuf* p, err_t err) {
    auto* s = static_cast<Stream*>(arg);
    if (!s) {
        if (p)
            pbuf_free(p);
        return ERR_OK;
    }
    if (!p || err != ERR_OK) {
        if (p)
            pbuf_free(p);
        s->peer_closed = true;
        s->owner->mark(*s);
        return ERR_OK;
    }
    if (s->pending)
        pbuf_cat(s->pending, p);
    else
        s->pending = p;
    fill_rx(*s);
    return ERR_OK;
}

err_t on_sent(void* arg, tcp_pcb*, u16_t) {
    auto* s = static_cast<Stream*>(arg);
    if (s)
        s->tx_progress_ns = clock::monotonic_ns(); // the peer is taking what it is sent
    if (s && s->tx_was_full)
        s->owner->mark(*s);
    return ERR_OK;
}

void on_error(void* arg, err_t) {
    // lwIP has already freed the pcb.
    auto* s = static_cast<Stream*>(arg);
    if (!s)
        return;
    s->pcb = nullptr;
    s->reset = true;
    s->owner->mark(*s);
}

// Hands queued transmit bytes to TCP as its send buffer allows.
void drain_tx(Stream& s) {
    if (!s.pcb)
        return;
    bool wrote = false;
    for (int guard = 0; guard < 8; ++guard) {
        uint32_t run;
        const uint8_t* start;
        {
            arch::IrqGuard irq;
            run = s.tx.contiguous();
            start = s.tx.data + s.tx.tail % s.tx.cap;
        }
        u16_t room = tcp_sndbuf(s.pcb);
        uint32_t n = run < room ? run : room;
        if (n > 0xffff)
            n = 0xffff;
        if (n == 0 || tcp_write(s.pcb, start, static_cast<u16_t>(n), TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        {
            arch::IrqGuard irq;
            s.tx.tail += n;
        }
        wrote = true;
    }
    if (wrote) {
        tcp_output(s.pcb);
        if (s.tx_was_full)
            s.owner->mark(s);
    }
}

} // namespace

bool Endpoint::listen() {
    if (m_port == 0)
        return false;
    tcp_pcb* pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    if (!pcb)
        return false;
    if (tcp_bind(pcb, IP4_ADDR_ANY, m_port) != ERR_OK) {
        tcp_close(pcb);
        KLOG_ERROR("net: port %u cannot be bound", m_port);
        return false;
    }
    m_listener = tcp_listen_with_backlog(pcb, 16);
    if (!m_listener) {
        tcp_close(pcb);
        return false;
    }
    tcp_arg(m_listener, this);
    tcp_accept(m_listener, on_accept);
    return true;
}

void Endpoint::release(Stream& s) {
    if (s.pending)
        pbuf_free(s.pending);
    if (s.pcb) {
        detach(s.pcb);
        if (s.app_abort || tcp_close(s.pcb) != ERR_OK)
            tcp_abort(s.pcb);
    }
    {
        arch::IrqGuard guard;
        m_streams[s.slot] = nullptr;
    }
    s.~Stream();
    kheap::free(&s);
}

// A peer that keeps a zero window (or stops acknowledging) while it is owed bytes is cut after
// kSendTimeoutNs: lwIP would otherwise probe it for ever with the data and its memory held.
void Endpoint::cut_if_stalled(Stream& s) {
    const uint64_t now = clock::monotonic_ns();
    bool owed = s.pcb && (s.tx.used() > 0 || s.pcb->unsent || s.pcb->unacked);
    if (!owed) {
        s.tx_progress_ns = now;
        return;
    }
    if (now - s.tx_progress_ns <= kSendTimeoutNs)
        return;
    KLOG_NOTICE("net: port %u: connection cut: the peer took nothing for %llu s", m_port,
                static_cast<unsigned long long>(kSendTimeoutNs / 1'000'000'000ull));
    tcp_pcb* pcb = s.pcb;
    detach(pcb);
    tcp_abort(pcb); // sends a reset; lwIP frees the pcb and its queued data
    s.pcb = nullptr;
    s.reset = true;
    ++m_stats.send_timeouts;
    mark(s);
}

void Endpoint::pump() {
    for (uint32_t i = 0; i < m_max; ++i) {
        Stream* s = m_streams[i];
        if (!s)
            continue;
        bool closed, abort;
        uint32_t left;
        {
            arch::IrqGuard guard;
            closed = s->app_closed;
            abort = s->app_abort;
            left = s->tx.used();
        }
        if (s->pending)
            fill_rx(*s);
        if (left)
            drain_tx(*s);
        cut_if_stalled(*s);
        // A close waits for the transmit ring to reach TCP (lwIP then sends it before its FIN).
        if (closed && (abort || !s->pcb || s->tx.used() == 0))
            release(*s);
    }
}

Endpoint::Stream* Endpoint::lookup(uint32_t handle) {
    uint32_t slot = handle & 0xffff;
    if (slot >= m_max || m_gen[slot] != (handle >> 16) || !m_streams[slot] || m_streams[slot]->app_closed)
        return nullptr;
    return m_streams[slot];
}

uint32_t Endpoint::poll(StreamEvent* out, uint32_t max) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m_max && n < max; ++i) {
        Stream* s = m_streams[i];
        if (!s || !s->marked || s->app_closed)
            continue;
        s->marked = false;
        uint32_t flags = 0;
        if (s->fresh)
            flags |= stream_flags::kNew;
        if (s->peer_closed)
            flags |= stream_flags::kPeerClosed;
        if (s->reset)
            flags |= stream_flags::kReset;
        s->fresh = false;
        out[n++] = { i | uint32_t(m_gen[i]) << 16, flags, s->rx.used(), s->tx.room(), s->peer_ip, s->peer_port, 0 };
    }
    return n;
}

int64_t Endpoint::recv(uint32_t handle, void* buf, uint32_t cap) {
    Stream* s = lookup(handle);
    if (!s)
        return -static_cast<int64_t>(ktl::Error::BadHandle);
    uint32_t n = s->rx.get(static_cast<uint8_t*>(buf), cap);
    m_stats.bytes_in += n;
    if (n == 0 && (s->peer_closed || s->reset))
        return -static_cast<int64_t>(ktl::Error::NotFound); // end of stream
    if (n > 0 && s->pending && m_net_wake)
        m_net_wake(); // room again for what lwIP holds
    return n;
}

int64_t Endpoint::send(uint32_t handle, const void* buf, uint32_t len) {
    Stream* s = lookup(handle);
    if (!s)
        return -static_cast<int64_t>(ktl::Error::BadHandle);
    if (s->reset)
        return -static_cast<int64_t>(ktl::Error::NotFound);
    uint32_t n = s->tx.put(static_cast<const uint8_t*>(buf), len);
    s->tx_was_full = n < len;
    m_stats.bytes_out += n;
    if (n > 0 && m_net_wake)
        m_net_wake();
    return n;
}

int64_t Endpoint::close(uint32_t handle, bool abort) {
    Stream* s = lookup(handle);
    if (!s)
        return -static_cast<int64_t>(ktl::Error::BadHandle);
    s->app_closed = true;
    s->app_abort = abort;
    if (m_net_wake)
        m_net_wake();
    return 0;
}

Endpoint::Stats Endpoint::stats() const {
    arch::IrqGuard guard;
    Stats st = m_stats;
    st.open = 0;
    for (uint32_t i = 0; i < m_max; ++i)
        st.open += m_streams[i] != nullptr;
    return st;
}

Endpoint& http_endpoint() {
    static Endpoint endpoint;
    return endpoint;
}

} // namespace net

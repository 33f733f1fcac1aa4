#include "endpoint.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../ipc/sync.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../syscall/sys.h"

#include <ktl/byte_ring.h>
#include <ktl/result.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/stats.h>
#include <lwip/tcp.h>

#include <new>

namespace net {

struct Endpoint::Stream {
    Endpoint* owner = nullptr;
    uint32_t slot = 0;
    tcp_pcb* pcb = nullptr;   // net task only; nullptr once lwIP let go of the connection
    uint32_t consumed = 0;    // read by the task, not yet reopened in TCP's window (shared)
    ktl::ByteRing rx, tx;     // the owner serialises with interrupts masked
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
    uint64_t active_ns = 0;      // last time the peer sent data or acknowledged some (admission)
    // The ring bytes follow the struct in the same heap block: rx, then tx.
    uint8_t* storage() { return reinterpret_cast<uint8_t*>(this + 1); }
};

namespace {

// Memory the endpoints' data may take in lwIP's heap (MEM_SIZE): the rest is kept for the frames
// the stack builds itself (ACKs, resets, SYN-ACKs, ICMP and ARP replies), so connections that
// queue data, however many, never leave it unable to acknowledge, refuse or answer a ping.
constexpr uint32_t kControlReserve = 256 * 1024;
constexpr uint32_t kDataHeapBudget = MEM_SIZE - kControlReserve;
// The receive ring holds a whole TCP window, and the window reopens only as the task reads: so
// whatever lwIP delivers is copied at once and its buffers go back to the receive pool every
// frame needs. A connection whose task stops reading holds no pool buffers, however its peer
// slices what it sends (one-byte segments included).
static_assert(Endpoint::kRxRing >= TCP_WND, "the receive ring must hold the whole window");
// Admission: with fewer than this many free connection slots, a new connection displaces the one
// that has been silent longest (no data, no acknowledgement for at least kDisplaceAfterNs).
constexpr uint32_t kAdmissionReserve = 8;
// A full backlog of half-open connections must find protocol control blocks beside a full table
// of established ones (and a few closing): lwIP drops a SYN it has no block for, real or not.
static_assert(MEMP_NUM_TCP_PCB >= Endpoint::kMaxStreams + Endpoint::kListenBacklog + 16,
              "lwIP's connection pool must hold the table and a full listen backlog");
static_assert(Endpoint::kListenBacklog <= 255, "lwIP's backlog is a u8_t");
constexpr uint64_t kDisplaceAfterNs = 2'000'000'000ull;

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

// Cuts the connection that has been silent longest, if for kDisplaceAfterNs: its slot is
// released as soon as the task closes the handle.
// Resets the connection (lwIP frees the pcb and what it queued) and tells the task.
void Endpoint::cut(Stream& s) {
    tcp_pcb* pcb = s.pcb;
    detach(pcb);
    tcp_abort(pcb);
    s.pcb = nullptr;
    s.reset = true;
    mark(s);
}

void Endpoint::displace_silent(uint64_t now) {
    Stream* oldest = nullptr;
    for (uint32_t i = 0; i < m_max; ++i) {
        Stream* s = m_streams[i];
        if (s && s->pcb && !s->app_closed && now - s->active_ns >= kDisplaceAfterNs &&
            (!oldest || s->active_ns < oldest->active_ns))
            oldest = s;
    }
    if (!oldest)
        return;
    ++m_stats.displaced;
    cut(*oldest);
}

err_t Endpoint::on_accept(void* arg, tcp_pcb* pcb, err_t err) {
    auto& ep = *static_cast<Endpoint*>(arg);
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    const uint64_t now = clock::monotonic_ns();
    uint32_t slot = ep.m_max, free = 0;
    for (uint32_t i = 0; i < ep.m_max; ++i)
        if (!ep.m_streams[i]) {
            if (slot == ep.m_max)
                slot = i;
            ++free;
        }
    // Room for new connections: near a full table the silent ones make way (the reserve covers
    // the time their task takes to close them).
    if (free <= kAdmissionReserve)
        ep.displace_silent(now);
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
    s->tx_progress_ns = now;
    s->active_ns = now;
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

static_assert(sizeof(Endpoint::Stream) + Endpoint::kRxRing + Endpoint::kTxRing <= Endpoint::kBlockBytes - 256,
              "a connection must fit one heap block, headers included");

namespace {

using Stream = Endpoint::Stream;

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
    s->active_ns = clock::monotonic_ns();
    {
        arch::IrqGuard irq;
        // Never more than the window, which the ring holds; should a peer's data not fit anyway,
        // lwIP keeps it (refused, unacknowledged) and offers it again (pump()).
        if (p->tot_len > s->rx.room())
            return ERR_MEM;
        // Bounded by the chain's length; empty buffers (a header-only first fragment) add nothing.
        uint32_t guard = 0;
        for (pbuf* q = p; q && guard < 1024; q = q->next, ++guard)
            s->rx.put(static_cast<const uint8_t*>(q->payload), q->len);
    }
    pbuf_free(p);
    s->owner->mark(*s);
    return ERR_OK;
}

err_t on_sent(void* arg, tcp_pcb*, u16_t) {
    auto* s = static_cast<Stream*>(arg);
    if (s)
        s->tx_progress_ns = s->active_ns = clock::monotonic_ns(); // the peer is taking what it is sent
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

// What the task has read goes back into TCP's window (the net task alone calls into lwIP).
void reopen_window(Stream& s) {
    uint32_t consumed;
    {
        arch::IrqGuard irq;
        consumed = s.consumed;
        s.consumed = 0;
    }
    for (uint32_t guard = 0; s.pcb && consumed > 0 && guard < 4; ++guard) {
        const uint32_t n = consumed < 0xffff ? consumed : 0xffff;
        tcp_recved(s.pcb, static_cast<u16_t>(n));
        consumed -= n;
    }
}

// How much more of this connection's data lwIP may hold: what the peer's window takes (one
// segment when it is closed, so lwIP's persist timer still probes it), within the send buffer
// and within the data's share of lwIP's heap. A peer that stops reading then ties up one segment
// of lwIP's memory, not a send buffer's worth.
uint32_t tcp_room(const tcp_pcb* pcb) {
    const uint32_t in_lwip = pcb->snd_lbb - pcb->lastack; // written, not yet acknowledged
    uint32_t allowed = pcb->snd_wnd > TCP_MSS ? pcb->snd_wnd : TCP_MSS;
    if (allowed > TCP_SND_BUF)
        allowed = TCP_SND_BUF;
    uint32_t room = allowed > in_lwip ? allowed - in_lwip : 0;
    if (room > tcp_sndbuf(pcb))
        room = tcp_sndbuf(pcb);
    const uint32_t heap_used = lwip_stats.mem.used;
    const uint32_t heap_left = heap_used < kDataHeapBudget ? kDataHeapBudget - heap_used : 0;
    return room < heap_left ? room : heap_left;
}

// Hands queued transmit bytes to TCP as tcp_room() allows.
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
            start = s.tx.front();
        }
        uint32_t room = tcp_room(s.pcb);
        uint32_t n = run < room ? run : room;
        if (n > 0xffff)
            n = 0xffff;
        if (n == 0 || tcp_write(s.pcb, start, static_cast<u16_t>(n), TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        {
            arch::IrqGuard irq;
            s.tx.consume(n);
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
    m_listener = tcp_listen_with_backlog(pcb, kListenBacklog);
    if (!m_listener) {
        tcp_close(pcb);
        return false;
    }
    tcp_arg(m_listener, this);
    tcp_accept(m_listener, on_accept);
    return true;
}

void Endpoint::release(Stream& s) {
    if (s.pcb) {
        detach(s.pcb);
        // Bytes the task never read (the rest of an oversized head it answered 431, say) keep
        // the window short of full, and lwIP closes such a connection with a reset that throws
        // away the answer still queued: the peer saw a reset, not the answer. Reopened, the
        // close is a FIN after the answer. (QEMU's own user network happened to deliver the
        // answer before the reset; passt passes the reset on at once.)
        if (!s.app_abort && (s.pcb->state == ESTABLISHED || s.pcb->state == CLOSE_WAIT)) {
            const uint32_t held = TCP_WND_MAX(s.pcb) - s.pcb->rcv_wnd;
            if (held > 0 && held <= 0xffff)
                tcp_recved(s.pcb, static_cast<u16_t>(held));
        }
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
    ++m_stats.send_timeouts;
    cut(s);
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
        reopen_window(*s);
        if (s->pcb && s->pcb->refused_data && tcp_process_refused_data(s->pcb) == ERR_ABRT)
            continue; // lwIP aborted the connection; on_error has marked it
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
    // Each poll goes on from the slot after the last one reported. Always starting from slot 0,
    // connections that are marked again by the time the task polls (peers pipelining requests
    // whose answers their host's buffers keep taking) filled every poll, and a connection in a
    // higher slot was never reported: a client with a key waited 20 s behind 80 of them.
    const uint32_t start = m_poll_next < m_max ? m_poll_next : 0;
    for (uint32_t k = 0; k < m_max && n < max; ++k) {
        const uint32_t i = (start + k) % m_max;
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
        m_poll_next = i + 1;
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
    s->consumed += n;
    // The window reopens in the net task: woken once there is a segment's worth to announce, or
    // the ring is empty (the peer may be waiting for any window at all).
    if (n > 0 && (s->consumed >= 2 * TCP_MSS || s->rx.used() == 0) && m_net_wake)
        m_net_wake();
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
    if (m_listener)
        st.half_open = reinterpret_cast<const tcp_pcb_listen*>(m_listener)->accepts_pending;
    return st;
}

Endpoint& http_endpoint() {
    static Endpoint endpoint;
    return endpoint;
}

} // namespace net

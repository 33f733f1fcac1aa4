#include "datagram.h"

#include "../arch/aarch64/cpu.h"
#include "../ipc/sync.h"
#include "../log.h"
#include "../mm/kheap.h"

#include <cstring>

#include <lwip/pbuf.h>
#include <lwip/udp.h>

namespace net {

struct Datagram::Slot {
    uint32_t ip;
    uint16_t port;
    uint16_t len;
    uint8_t data[kMaxPayload];
};

namespace {

static_assert((Datagram::kRxSlots + Datagram::kTxSlots) * sizeof(Datagram::Slot) <= 64 * 1024,
              "the rings fill one 64 KiB heap block");

Datagram g_endpoints[Datagram::kMaxEndpoints];
// One wake-up for every endpoint: the node's two are the cluster task's (its membership protocol
// and its consensus group), which waits on either and reads both each round.
ipc::Event g_wake(true);
void (*g_net_wake)() = nullptr;

void on_recv(void* arg, udp_pcb*, pbuf* p, const ip_addr_t* addr, u16_t port) {
    static_cast<Datagram*>(arg)->deliver(p, addr ? lwip_ntohl(ip4_addr_get_u32(addr)) : 0, port);
}

} // namespace

Datagram::Slot& Datagram::rx_slot(uint32_t i) const { return m_slots[i % kRxSlots]; }
Datagram::Slot& Datagram::tx_slot(uint32_t i) const { return m_slots[kRxSlots + i % kTxSlots]; }
uint32_t Datagram::index() const { return static_cast<uint32_t>(this - g_endpoints); }
ipc::Event& Datagram::event() { return g_wake; }
void Datagram::wake_waiter() { g_wake.signal(); }

bool Datagram::any_readable() {
    for (const auto& e : g_endpoints)
        if (e.m_state != State::Free && e.readable())
            return true;
    return false;
}

ktl::Result<Datagram*> Datagram::open(uint16_t port) {
    if (port == 0 || port == 67 || port == 68)
        return ktl::Error::InvalidArgs;
    Datagram* free = nullptr;
    for (auto& e : g_endpoints) {
        if (e.m_state != State::Free && e.m_port == port)
            return ktl::Error::Exists;
        if (e.m_state == State::Free && !free)
            free = &e;
    }
    if (!free)
        return ktl::Error::Full;
    // The kernel's, not the caller's: the endpoint outlives a task's heap reclaim until the net
    // task has let lwIP's side go, and frees the block itself.
    auto block = kheap::alloc_for(kheap::Owner::Kernel, (kRxSlots + kTxSlots) * sizeof(Slot));
    if (!block)
        return block.error();
    *free = Datagram {};
    free->m_slots = static_cast<Slot*>(*block);
    free->m_port = port;
    free->m_state = State::Opening;
    if (g_net_wake)
        g_net_wake();
    return free;
}

int64_t Datagram::send(uint32_t ip, uint16_t port, const void* data, uint32_t len) {
    if (len > kMaxPayload || port == 0 || ip == 0)
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    if (m_state == State::Failed || m_state == State::Closing || m_state == State::Free)
        return -static_cast<int64_t>(ktl::Error::BadHandle);
    if (m_tx_head - m_tx_tail == kTxSlots) {
        ++m_stats.tx_refused;
        return -static_cast<int64_t>(ktl::Error::Full);
    }
    Slot& s = tx_slot(m_tx_head);
    s.ip = ip;
    s.port = port;
    s.len = static_cast<uint16_t>(len);
    memcpy(s.data, data, len);
    ++m_tx_head;
    if (g_net_wake)
        g_net_wake();
    return len;
}

int64_t Datagram::recv(void* buf, uint32_t cap, DatagramFrom* from) {
    if (m_state == State::Failed)
        return -static_cast<int64_t>(ktl::Error::NoMemory);
    if (m_rx_head == m_rx_tail)
        return -static_cast<int64_t>(ktl::Error::WouldBlock);
    Slot& s = rx_slot(m_rx_tail++);
    if (s.len > cap)
        return -static_cast<int64_t>(ktl::Error::Truncated);
    memcpy(buf, s.data, s.len);
    if (from)
        *from = { s.ip, s.port, 0 };
    return s.len;
}

bool Datagram::readable() const { return m_rx_head != m_rx_tail || m_state == State::Failed; }

void Datagram::close() {
    if (m_state == State::Free)
        return;
    m_state = State::Closing;
    event().shutdown();
    if (g_net_wake)
        g_net_wake();
}

Datagram::Stats Datagram::stats() const {
    arch::IrqGuard guard;
    return m_stats;
}

void Datagram::set_net_wake(void (*wake)()) { g_net_wake = wake; }

void Datagram::deliver(pbuf* p, uint32_t ip, uint16_t port) {
    {
        arch::IrqGuard guard;
        if (m_state != State::Open || p->tot_len > kMaxPayload || m_rx_head - m_rx_tail == kRxSlots) {
            ++m_stats.rx_dropped;
        } else {
            Slot& s = rx_slot(m_rx_head);
            s.ip = ip;
            s.port = port;
            s.len = static_cast<uint16_t>(pbuf_copy_partial(p, s.data, p->tot_len, 0));
            ++m_rx_head;
            ++m_stats.rx;
        }
    }
    pbuf_free(p);
    event().signal();
}

void Datagram::pump() {
    State state;
    {
        arch::IrqGuard guard;
        state = m_state;
    }
    if (state == State::Opening) {
        udp_pcb* pcb = udp_new();
        if (pcb && udp_bind(pcb, IP_ADDR_ANY, m_port) == ERR_OK) {
            udp_recv(pcb, on_recv, this);
            m_pcb = pcb;
            arch::IrqGuard guard;
            if (m_state == State::Opening)
                m_state = State::Open;
            KLOG_INFO("net: UDP endpoint on port %u", m_port);
        } else {
            if (pcb)
                udp_remove(pcb);
            KLOG_WARN("net: cannot bind UDP port %u", m_port);
            arch::IrqGuard guard;
            if (m_state == State::Opening)
                m_state = State::Failed;
            event().signal();
        }
        return;
    }
    if (state == State::Closing) {
        if (m_pcb)
            udp_remove(m_pcb);
        m_pcb = nullptr;
        kheap::free(m_slots);
        arch::IrqGuard guard;
        m_slots = nullptr;
        m_state = State::Free;
        m_port = 0;
        return;
    }
    if (state != State::Open)
        return;
    for (uint32_t budget = kTxSlots; budget > 0; --budget) {
        Slot* s;
        {
            arch::IrqGuard guard;
            if (m_tx_tail == m_tx_head)
                return;
            s = &tx_slot(m_tx_tail);
        }
        // The slot stays ours until the tail moves past it: the task cannot reuse it meanwhile.
        pbuf* p = pbuf_alloc(PBUF_TRANSPORT, s->len, PBUF_RAM);
        bool sent = false;
        if (p) {
            pbuf_take(p, s->data, s->len);
            ip_addr_t to;
            ip4_addr_set_u32(&to, lwip_htonl(s->ip));
            sent = udp_sendto(m_pcb, p, &to, s->port) == ERR_OK;
            pbuf_free(p);
        }
        arch::IrqGuard guard;
        ++m_tx_tail;
        ++(sent ? m_stats.tx : m_stats.tx_errors);
    }
}

void Datagram::pump_all() {
    for (auto& e : g_endpoints)
        e.pump();
}

} // namespace net

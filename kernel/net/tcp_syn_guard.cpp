// SYN floods: lwIP's listen backlog (TCP_LISTEN_BACKLOG) bounds the half-open (SYN-RECEIVED)
// connections of each listener, but on its own a full backlog drops every further SYN, a real
// client's too, until the spoofed ones time out some 20 s later. So a SYN that finds the backlog
// full evicts the listener's oldest half-open connection instead: a flood then holds at most the
// backlog's worth of connections, and a real client's handshake has until that many newer SYNs
// arrive to complete (a LAN round trip against a flood's rate).
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "lwip_hooks.h"

#include "../log.h"

namespace {

uint64_t g_evicted = 0;

// The listener's half-open connection that has waited longest, or null.
tcp_pcb* oldest_half_open(const tcp_pcb_listen* listener) {
    tcp_pcb* oldest = nullptr;
    uint32_t waited = 0;
    uint32_t guard = 0;
    for (tcp_pcb* pcb = tcp_active_pcbs; pcb && guard < MEMP_NUM_TCP_PCB; pcb = pcb->next, ++guard) {
        if (pcb->state != SYN_RCVD || pcb->listener != listener)
            continue;
        uint32_t age = tcp_ticks - pcb->tmr;
        if (!oldest || age >= waited) {
            oldest = pcb;
            waited = age;
        }
    }
    return oldest;
}

} // namespace

extern "C" int basalt_tcp_inpacket(void* pcb_arg, const void* hdr_arg) {
    auto* pcb = static_cast<tcp_pcb*>(pcb_arg);
    const auto* hdr = static_cast<const tcp_hdr*>(hdr_arg);
    if (pcb->state != LISTEN)
        return ERR_OK;
    const uint8_t flags = TCPH_FLAGS(hdr);
    if ((flags & (TCP_SYN | TCP_ACK | TCP_RST)) != TCP_SYN)
        return ERR_OK;
    auto* listener = reinterpret_cast<tcp_pcb_listen*>(pcb);
    if (listener->accepts_pending < listener->backlog)
        return ERR_OK;
    if (tcp_pcb* victim = oldest_half_open(listener)) {
        tcp_abort(victim); // a reset to its (likely spoofed) peer; frees its backlog place
        ++g_evicted;
        if ((g_evicted & (g_evicted - 1)) == 0) // 1, 2, 4, 8, ...: a flood is visible, not a flood of lines
            KLOG_NOTICE("net: port %u: listen backlog full, %llu half-open connections evicted so far",
                        listener->local_port, static_cast<unsigned long long>(g_evicted));
    }
    return ERR_OK;
}

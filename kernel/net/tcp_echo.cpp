#include "tcp_echo.h"
#include "pbuf_chain.h"

#include "../fault_injection.h"
#include "../log.h"

#include <cstring>

#include <lwip/debug.h>
#include <lwip/tcp.h>

namespace net {
namespace {

// Bytes received but not yet queued for sending stay in `pending` and are not acknowledged
// to the window (tcp_recved) until they are: a slow reader throttles the sender through TCP's
// own flow control, and memory per connection is bounded by the receive window.
struct Conn {
    struct tcp_pcb* pcb = nullptr;
    struct pbuf* pending = nullptr;
};

Conn g_conns[kEchoMaxConnections];
uint64_t g_accepted = 0;

void release(Conn& c) {
    if (c.pending)
        pbuf_free(c.pending);
    c = Conn {};
}

void close(Conn& c) {
    struct tcp_pcb* pcb = c.pcb;
    tcp_arg(pcb, nullptr);
    tcp_recv(pcb, nullptr);
    tcp_sent(pcb, nullptr);
    tcp_err(pcb, nullptr);
    release(c);
    if (tcp_close(pcb) != ERR_OK)
        tcp_abort(pcb);
}

constexpr u16_t kMaxPendingBuffers = 8;

void flush(Conn& c) {
    // Bounded: each round queues at least one byte or stops.
    for (int round = 0; round < 64 && c.pending; ++round) {
        c.pending = net::skip_empty(c.pending);
        if (!c.pending)
            break;
        u16_t room = tcp_sndbuf(c.pcb);
        u16_t chunk = c.pending->len < room ? c.pending->len : room;
        if (chunk == 0 || tcp_write(c.pcb, c.pending->payload, chunk, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        tcp_recved(c.pcb, chunk);
        c.pending = pbuf_free_header(c.pending, chunk);
    }
    tcp_output(c.pcb);
}

err_t on_recv(void* arg, struct tcp_pcb*, struct pbuf* p, err_t err) {
    Conn& c = *static_cast<Conn*>(arg);
    if (!p || err != ERR_OK) { // the peer closed its side
        if (p)
            pbuf_free(p);
        close(c);
        return ERR_OK;
    }
    if (fault_injection::lwip_assert_armed() && p->len >= 11 && std::memcmp(p->payload, "LWIP-ASSERT", 11) == 0)
        LWIP_ASSERT("fault injection: deliberate lwIP assertion in the echo service", false);
    if (c.pending) {
        flush(c);
        // As the HTTP endpoint: at most kMaxPendingBuffers held; lwIP keeps the rest, unacknowledged.
        if (c.pending && pbuf_clen(c.pending) + pbuf_clen(p) > kMaxPendingBuffers)
            return ERR_MEM;
    }
    if (c.pending)
        pbuf_cat(c.pending, p);
    else
        c.pending = p;
    flush(c);
    return ERR_OK;
}

err_t on_sent(void* arg, struct tcp_pcb*, u16_t) {
    flush(*static_cast<Conn*>(arg));
    return ERR_OK;
}

void on_error(void* arg, err_t) {
    // lwIP has already freed the pcb.
    release(*static_cast<Conn*>(arg));
}

err_t on_accept(void*, struct tcp_pcb* pcb, err_t err) {
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    for (Conn& c : g_conns) {
        if (c.pcb)
            continue;
        c.pcb = pcb;
        tcp_arg(pcb, &c);
        tcp_recv(pcb, on_recv);
        tcp_sent(pcb, on_sent);
        tcp_err(pcb, on_error);
        ++g_accepted;
        return ERR_OK;
    }
    tcp_abort(pcb);
    return ERR_ABRT;
}

} // namespace

bool tcp_echo_start(uint16_t port) {
    struct tcp_pcb* pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    if (!pcb)
        return false;
    if (tcp_bind(pcb, IP4_ADDR_ANY, port) != ERR_OK) {
        tcp_close(pcb);
        return false;
    }
    struct tcp_pcb* listener = tcp_listen_with_backlog(pcb, kEchoMaxConnections);
    if (!listener) {
        tcp_close(pcb);
        return false;
    }
    tcp_accept(listener, on_accept);
    KLOG_INFO("net: tcp echo listening on port %u", port);
    return true;
}

} // namespace net

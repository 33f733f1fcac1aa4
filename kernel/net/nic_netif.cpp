#include "nic_netif.h"
#include "lwip_guard.h"

#include <drivers/nic.h>

#include <lwip/etharp.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/stats.h>
#include <netif/ethernet.h>

namespace net {
namespace {

Nic& device(struct netif* netif) { return *static_cast<Nic*>(netif->state); }

// One frame out: copied into a driver buffer (lwIP may chain pbufs; the device gets one
// contiguous buffer per frame, which keeps the transmit ring one descriptor per packet).
err_t link_output(struct netif* netif, struct pbuf* p) {
    size_t capacity = 0;
    uint8_t* buf = device(netif).tx_acquire(capacity);
    if (!buf) {
        LINK_STATS_INC(link.memerr);
        return ERR_MEM; // every transmit buffer is with the device; TCP will retransmit
    }
    if (p->tot_len > capacity) {
        device(netif).tx_submit(0); // releases the buffer unsent
        LINK_STATS_INC(link.lenerr);
        return ERR_BUF;
    }
    pbuf_copy_partial(p, buf, p->tot_len, 0);
    device(netif).tx_submit(p->tot_len);
    LINK_STATS_INC(link.xmit);
    return ERR_OK;
}

void deliver(void* ctx, const uint8_t* frame, size_t len) {
    auto* netif = static_cast<struct netif*>(ctx);
    struct pbuf* p = pbuf_alloc(PBUF_RAW, static_cast<u16_t>(len), PBUF_POOL);
    if (!p) {
        LINK_STATS_INC(link.memerr);
        LINK_STATS_INC(link.drop);
        return;
    }
    pbuf_take(p, frame, static_cast<u16_t>(len));
    LINK_STATS_INC(link.recv);
    if (netif->input(p, netif) != ERR_OK)
        pbuf_free(p);
    net::drop_suspect(); // a connection an lwIP assertion named while this frame went through
}

} // namespace

err_t nic_netif_init(struct netif* netif) {
    if (!netif->state)
        return ERR_ARG;
    auto& dev = device(netif);
    netif->name[0] = 'v';
    netif->name[1] = 'n';
    netif->hwaddr_len = ETH_HWADDR_LEN;
    for (int i = 0; i < ETH_HWADDR_LEN; ++i)
        netif->hwaddr[i] = dev.mac()[i];
    netif->mtu = 1500;
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    netif->output = etharp_output;
    netif->linkoutput = link_output;
    return ERR_OK;
}

size_t nic_netif_poll(struct netif* netif, size_t budget) {
    size_t n = device(netif).receive(deliver, netif, budget);
    device(netif).reclaim_tx();
    return n;
}

} // namespace net

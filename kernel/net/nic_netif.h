#pragma once
// lwIP network interface over a NIC driver (drivers/nic.h: virtio-net, GENET). Runs in the net
// task only.
#include <cstddef>

#include <lwip/err.h>

struct netif;

namespace net {

// netif_add() init function; netif->state must be the Nic.
err_t nic_netif_init(struct netif* netif);
// Feeds up to `budget` receive completions into lwIP and reclaims finished transmissions;
// returns the number taken (budget: there may be more).
size_t nic_netif_poll(struct netif* netif, size_t budget);

} // namespace net

#pragma once
// lwIP bring-up for the net task: the interface over the virtio-net device, its IPv4
// configuration (DHCP or the `ip=` boot argument) and the services named by boot arguments.
namespace virtio {
class VirtioNet;
}
struct netif;

namespace net {

// lwip_init(), the interface added and up, addressing started. Returns the interface, or
// nullptr when the stack cannot start (logged).
struct netif* stack_start(virtio::VirtioNet& dev);

} // namespace net

#pragma once
// lwIP bring-up for the net task: the interface over the NIC (drivers/nic.h), its IPv4
// configuration (DHCP or the `ip=` boot argument) and the services named by boot arguments.
class Nic;
struct netif;

namespace net {

// lwip_init(), the interface added and up, addressing started. Returns the interface, or
// nullptr when the stack cannot start (logged).
struct netif* stack_start(Nic& dev);

} // namespace net

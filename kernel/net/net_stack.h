#pragma once
// lwIP bring-up for the net task: the interfaces over the NICs (drivers/nic.h), their IPv4
// configuration (DHCP or the `ip=` / `ip1=` boot arguments) and the services named by boot
// arguments.
#include <cstddef>

class Nic;
struct netif;

namespace net {

constexpr size_t kMaxInterfaces = 2;

// lwip_init(), then interface vn<i> over devs[i] (vn0 is the default route) added, up and its
// addressing started. out[i] is the interface, or nullptr when it cannot start (logged). Returns
// false, with no interface added after it, when vn0 cannot.
bool stack_start(Nic* const* devs, size_t count, struct netif** out);

} // namespace net

#pragma once
// The IPv4 configuration of the network interface, from the boot argument `ip=`:
//   ip=dhcp (or absent)                 DHCP
//   ip=A.B.C.D/N                        static address, prefix length 1..30, no gateway
//   ip=A.B.C.D/N,gw=E.F.G.H             ... and a default gateway inside that subnet
// Portable and allocation-free; addresses are in host byte order.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ktl/result.h>

namespace netcfg {

struct Ipv4Config {
    bool dhcp = true;
    uint32_t address = 0;
    uint32_t netmask = 0;
    uint32_t gateway = 0; // 0: none
    uint8_t prefix = 0;
};

// Dotted quad, exactly four decimal octets of 1..3 digits each.
ktl::Result<uint32_t> parse_ipv4(std::string_view text);
// InvalidArgs for anything malformed, a network or broadcast address, or a gateway that is
// outside the subnet or equal to the address.
ktl::Result<Ipv4Config> parse_ip_arg(std::string_view value);
// "A.B.C.D" into out (>= 16 bytes); returns the length.
size_t format_ipv4(uint32_t address, char* out, size_t cap);

} // namespace netcfg

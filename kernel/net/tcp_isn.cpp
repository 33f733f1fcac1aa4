// RFC 6528 initial sequence numbers: ISN = M + F(local address and port, remote address and port,
// secret), M a clock ticking every 4 microseconds, F the first 32 bits of SHA-256 over the tuple
// and a 256-bit secret drawn once from the kernel's random source. A peer cannot predict the
// numbers of other connections (blind injection, spoofed handshakes), and a reused tuple still
// gets numbers that move forward.
#include "../clock.h"
#include "../rng.h"

#include <crypto/sha256.h>

#include "lwip/ip_addr.h"
#include "lwip_hooks.h"

namespace {

uint8_t g_secret[32];
bool g_have_secret = false;

} // namespace

extern "C" uint32_t basalt_tcp_isn(const void* local_ip, uint16_t local_port, const void* remote_ip,
                                   uint16_t remote_port) {
    if (!g_have_secret) { // the net task is lwIP's only caller: no race
        rng::fill(g_secret, sizeof g_secret);
        g_have_secret = true;
    }
    uint32_t addrs[2] = { ip4_addr_get_u32(ip_2_ip4(static_cast<const ip_addr_t*>(local_ip))),
                          ip4_addr_get_u32(ip_2_ip4(static_cast<const ip_addr_t*>(remote_ip))) };
    uint16_t ports[2] = { local_port, remote_port };
    crypto::Sha256 h;
    h.update({ reinterpret_cast<const uint8_t*>(addrs), sizeof addrs });
    h.update({ reinterpret_cast<const uint8_t*>(ports), sizeof ports });
    h.update({ g_secret, sizeof g_secret });
    auto digest = h.finish();
    uint32_t f = uint32_t(digest[0]) << 24 | uint32_t(digest[1]) << 16 | uint32_t(digest[2]) << 8 | digest[3];
    return static_cast<uint32_t>(clock::monotonic_ns() / 4000) + f;
}

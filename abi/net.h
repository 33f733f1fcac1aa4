#pragma once
// Records of the network calls (net_poll, udp_recv).
#include <cstdint>

namespace abi {

// Connections one NetEndpoint holds at once (handles carry a slot below it).
constexpr uint32_t kMaxStreams = 256;

// What net_poll reports for one connection.
struct StreamEvent {
    uint32_t handle; // slot | generation << 16: stale handles are refused
    uint32_t flags;
    uint32_t readable; // bytes waiting in the receive ring
    uint32_t writable; // room in the transmit ring
    uint32_t peer_ip;  // the remote IPv4 address (as lwIP holds it) and port
    uint16_t peer_port;
    uint16_t reserved;
};

// Where a received datagram came from (udp_recv fills it in): IPv4 in host byte order.
struct DatagramFrom {
    uint32_t ip;
    uint16_t port;
    uint16_t reserved;
};

namespace stream_flags {
constexpr uint32_t kNew = 1u << 0;        // accepted since the last poll
constexpr uint32_t kPeerClosed = 1u << 1; // the peer sent FIN: no more bytes after those buffered
constexpr uint32_t kReset = 1u << 2;      // the connection is gone (reset, error): close the handle
} // namespace stream_flags

} // namespace abi

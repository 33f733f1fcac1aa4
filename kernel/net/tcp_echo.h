#pragma once
// A TCP echo service on the lwIP raw API (boot argument `tcp_echo=PORT`, off by default): the
// smallest end-to-end proof that the stack accepts connections and moves data both ways.
// Runs in the net task. At most kMaxConnections at once; more are refused (reset).
#include <cstdint>

namespace net {

constexpr uint32_t kEchoMaxConnections = 4;

// Listens on port; false when the port cannot be bound.
bool tcp_echo_start(uint16_t port);

} // namespace net

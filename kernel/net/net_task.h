#pragma once
// The net task: the one task that owns the network device and (later) the TCP/IP stack.
// It sleeps on an event that the device interrupt signals, so an idle network costs nothing.
namespace net {

// Creates the net task when the platform found a network device; no-op otherwise.
void start();

} // namespace net

#pragma once
// The net task: the one task that owns the network device and the TCP/IP stack (lwIP, raw API;
// see kernel/net/port/lwipopts.h for why). It sleeps on an event that the device interrupt
// signals, or until lwIP's next timer, so an idle network costs nothing.
namespace net {

// Creates the net task when the platform found a network device; no-op otherwise.
void start();

} // namespace net

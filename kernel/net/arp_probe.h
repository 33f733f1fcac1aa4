#pragma once
// A link check below any IP stack (boot argument `netcheck`): the net task sends one ARP
// request for the gateway straight through the NIC driver and reports the MAC address
// in the reply. It proves that frames leave the guest and come back, on either transport.
#include <cstddef>
#include <cstdint>

class Nic;

namespace net {

struct ArpProbe {
    uint32_t sender_ip; // host order
    uint32_t target_ip;
    bool answered = false;
    uint8_t target_mac[6] = {};
};

// Builds and queues the request; false when no transmit buffer is free.
bool arp_probe_send(Nic& dev, const ArpProbe& probe);
// Checks one received frame for the reply; true (and fills target_mac) when it is.
bool arp_probe_match(ArpProbe& probe, const uint8_t* frame, size_t len);

} // namespace net

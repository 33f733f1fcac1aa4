#include "arp_probe.h"

#include <drivers/nic.h>

#include <cstring>

namespace net {
namespace {

// RFC 826 over Ethernet: 14-byte Ethernet header + 28-byte ARP packet, padded to 60 bytes.
constexpr size_t kEthHeader = 14;
constexpr size_t kArpBytes = 28;
constexpr size_t kMinFrame = 60;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint16_t kOpRequest = 1;
constexpr uint16_t kOpReply = 2;

void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
    put16(p, static_cast<uint16_t>(v >> 16));
    put16(p + 2, static_cast<uint16_t>(v));
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t get32(const uint8_t* p) { return uint32_t(get16(p)) << 16 | get16(p + 2); }

} // namespace

bool arp_probe_send(Nic& dev, const ArpProbe& probe) {
    size_t cap = 0;
    uint8_t* f = dev.tx_acquire(cap);
    if (!f || cap < kMinFrame)
        return false;
    memset(f, 0, kMinFrame);
    memset(f, 0xff, 6); // broadcast
    memcpy(f + 6, dev.mac(), 6);
    put16(f + 12, kEtherTypeArp);
    uint8_t* a = f + kEthHeader;
    put16(a + 0, 1);      // hardware: Ethernet
    put16(a + 2, 0x0800); // protocol: IPv4
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, kOpRequest);
    memcpy(a + 8, dev.mac(), 6);
    put32(a + 14, probe.sender_ip);
    put32(a + 24, probe.target_ip); // target hardware address (a + 18) stays zero
    dev.tx_submit(kMinFrame);
    return true;
}

bool arp_probe_match(ArpProbe& probe, const uint8_t* f, size_t len) {
    if (len < kEthHeader + kArpBytes || get16(f + 12) != kEtherTypeArp)
        return false;
    const uint8_t* a = f + kEthHeader;
    if (get16(a) != 1 || get16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4 || get16(a + 6) != kOpReply)
        return false;
    if (get32(a + 14) != probe.target_ip || get32(a + 24) != probe.sender_ip)
        return false;
    memcpy(probe.target_mac, a + 8, 6);
    probe.answered = true;
    return true;
}

} // namespace net

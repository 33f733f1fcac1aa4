#pragma once
// What the net task publishes about its interface for the rest of the kernel to read (shell,
// later the MCP status resource). lwIP itself stays private to the net task: readers only see
// this snapshot, written by the net task under a sequence count (a reader retries while a
// write is in progress, a bounded number of times).
#include <cstdint>

namespace net {

struct Status {
    bool up = false;      // an address is configured
    bool dhcp = false;    // ... and it came from a DHCP lease
    uint32_t address = 0; // host byte order
    uint32_t netmask = 0;
    uint32_t gateway = 0;
    uint32_t lease_s = 0; // DHCP lease time
};

void publish_status(const Status& status); // net task only
// False when no consistent snapshot could be read (a writer kept interrupting).
bool read_status(Status& out);

} // namespace net

namespace net {

// lwIP's drop and allocation-failure counters (racy snapshot; for diagnostics only).
struct StackCounters {
    uint32_t link_drop, link_memerr, tcp_drop, tcp_memerr, pcb_err, pcb_used, pcb_max, seg_err, pool_err;
};
StackCounters stack_counters();

} // namespace net

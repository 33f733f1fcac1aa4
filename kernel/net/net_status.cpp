#include "net_status.h"

namespace net {
namespace {

Status g_status;
volatile uint32_t g_seq = 0; // odd while the net task is writing

inline void barrier() { asm volatile("dmb ish" ::: "memory"); }

} // namespace

void publish_status(const Status& status) {
    g_seq = g_seq + 1;
    barrier();
    g_status = status;
    barrier();
    g_seq = g_seq + 1;
}

bool read_status(Status& out) {
    for (int attempt = 0; attempt < 16; ++attempt) {
        uint32_t before = g_seq;
        barrier();
        if (before & 1)
            continue;
        out = g_status;
        barrier();
        if (g_seq == before)
            return true;
    }
    return false;
}

} // namespace net

#include <lwip/memp.h>
#include <lwip/stats.h>

namespace net {

StackCounters stack_counters() {
    StackCounters c {};
    c.link_drop = lwip_stats.link.drop;
    c.link_memerr = lwip_stats.link.memerr;
    c.tcp_drop = lwip_stats.tcp.drop;
    c.tcp_memerr = lwip_stats.tcp.memerr;
    c.pcb_err = lwip_stats.memp[MEMP_TCP_PCB]->err;
    c.pcb_used = lwip_stats.memp[MEMP_TCP_PCB]->used;
    c.pcb_max = lwip_stats.memp[MEMP_TCP_PCB]->max;
    c.seg_err = lwip_stats.memp[MEMP_TCP_SEG]->err;
    c.pool_err = lwip_stats.memp[MEMP_PBUF_POOL]->err;
    return c;
}

} // namespace net

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

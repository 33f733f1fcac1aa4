#include "lwip_guard.h"

#include "../log.h"

#include <lwip/priv/tcp_priv.h>
#include <lwip/tcp.h>

namespace net {
namespace {

uint64_t g_assertions = 0;
tcp_pcb* g_suspect = nullptr;

bool is_active(const tcp_pcb* pcb) {
    uint32_t guard = 0;
    for (tcp_pcb* p = tcp_active_pcbs; p && guard < MEMP_NUM_TCP_PCB; p = p->next, ++guard)
        if (p == pcb)
            return true;
    return false;
}

} // namespace

void note_assertion(const char* message, const char* file, int line) {
    ++g_assertions;
    // tcp_input_pcb: the connection whose segment lwIP is processing (null outside tcp_input).
    if (tcp_input_pcb)
        g_suspect = tcp_input_pcb;
    KLOG_ERROR("lwip: assertion \"%s\" failed at %s:%d (%llu so far)%s", message, file, line,
               static_cast<unsigned long long>(g_assertions), tcp_input_pcb ? "; the connection is dropped" : "");
}

void drop_suspect() {
    tcp_pcb* pcb = g_suspect;
    g_suspect = nullptr;
    // Still a live connection (lwIP may have closed it meanwhile): reset it; its owner hears of it
    // through its error callback.
    if (pcb && is_active(pcb))
        tcp_abort(pcb);
}

uint64_t assertions() { return g_assertions; }

} // namespace net

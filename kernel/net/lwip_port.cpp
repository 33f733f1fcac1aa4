// The few services lwIP needs from the kernel in a NO_SYS build: a millisecond clock,
// diagnostics, assertions and random numbers (kernel/net/port/arch/cc.h).
#include "../clock.h"
#include "../log.h"
#include "../panic.h"
#include "lwip_guard.h"

#include <lwip/arch.h>
#include <lwip/sys.h>

#include <cstdarg>
#include <cstdio>

#include <drivers/generic_timer.h>

extern "C" {

// The kernel's monotonic clock; wraps after 49.7 days, which lwIP's timer arithmetic expects.
u32_t sys_now(void) { return static_cast<u32_t>(clock::monotonic_ns() / 1000000ull); }

void basalt_lwip_diag(const char* fmt, ...) {
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    KLOG_DEBUG("lwip: %s", line);
}

// A broken invariant in lwIP's memory bookkeeping (its heap, pools and buffers) means its memory
// can no longer be trusted: stop. Elsewhere, in the protocol code, lwIP is written to run on
// past its assertions (production builds define LWIP_NOASSERT): log it, count it, and drop the
// TCP connection being processed, if any, once the frame is through (net::drop_suspect): one
// peer's odd segment must not power the appliance off.
void basalt_lwip_assert(const char* message, const char* file, int line) {
    const char* base = file;
    for (const char* c = file; *c; ++c)
        if (*c == '/')
            base = c + 1;
    static const char* const kMemoryFiles[] = { "mem.c", "memp.c", "pbuf.c" };
    for (const char* m : kMemoryFiles) {
        bool same = true;
        for (size_t i = 0; same && (m[i] || base[i]); ++i)
            same = m[i] == base[i];
        if (same)
            panic("lwip: assertion \"%s\" failed at %s:%d", message, base, line);
    }
    net::note_assertion(message, base, line);
}

// For TCP initial sequence numbers, DHCP transaction ids and ephemeral ports: unpredictable
// enough against an off-path guess on a user network (xorshift seeded and stirred by the
// free-running counter), not a cryptographic generator.
uint32_t basalt_lwip_rand(void) {
    static uint64_t state = 0;
    state ^= GenericTimer::counter() * 0x9e3779b97f4a7c15ull;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<uint32_t>(state >> 32);
}

} // extern "C"

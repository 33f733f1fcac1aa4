#include "clock.h"

#include <drivers/generic_timer.h>
#include <ktl/civil_time.h>

#include <cstring>

namespace clock {
namespace {
bool g_known = false;
Source g_source = Source::None;
int64_t g_anchor_unix = 0;
uint64_t g_anchor_mono = 0;
} // namespace

uint64_t monotonic_ns() { return GenericTimer::frequency() ? GenericTimer::now_ns() : 0; }

void set_wall_clock(int64_t unix_seconds, Source source) {
    g_anchor_mono = monotonic_ns();
    g_anchor_unix = unix_seconds;
    g_known = true;
    g_source = source;
}

bool wall_clock_known() { return g_known; }
Source source() { return g_source; }

const char* source_name() {
    switch (g_source) {
    case Source::Rtc: return "rtc";
    case Source::BootArgument: return "boot argument";
    case Source::Sntp: return "sntp";
    case Source::None: break;
    }
    return "not set";
}

int64_t unix_seconds() {
    if (!g_known)
        return 0;
    return g_anchor_unix + static_cast<int64_t>((monotonic_ns() - g_anchor_mono) / 1000000000ull);
}

uint64_t unix_ms() {
    if (!g_known || g_anchor_unix < 0)
        return 0;
    return static_cast<uint64_t>(g_anchor_unix) * 1000 + (monotonic_ns() - g_anchor_mono) / 1000000ull;
}

void rfc3339_now(char* out, size_t cap) {
    if (!g_known) {
        if (cap > 0) {
            strncpy(out, "unknown", cap - 1);
            out[cap - 1] = '\0';
        }
        return;
    }
    ktl::format_rfc3339(unix_seconds(), out, cap);
}

} // namespace clock

#pragma once
// Kernel time: a monotonic clock from the generic timer's counter, and UTC wall-clock time
// anchored once to the RTC and then advanced by the monotonic clock.
#include <cstddef>
#include <cstdint>

namespace clock {

uint64_t monotonic_ns();
void set_wall_clock(int64_t unix_seconds);  // anchors "now"
bool wall_clock_known();
int64_t unix_seconds();                     // 0 when unknown
// Writes RFC 3339 UTC ("2026-11-22T08:00:00Z") into out (>= 21 bytes); "unknown" if unset.
void rfc3339_now(char* out, size_t cap);

} // namespace clock

#pragma once
// Kernel time: a monotonic clock from the generic timer's counter, and UTC wall-clock time
// anchored once (to the RTC, or where a board has none, such as the Pi, to a `clock=` boot
// argument from the host that launched it) and then advanced by the monotonic clock. Until it
// is anchored, timestamps read "unknown", never a 1970 date passed off as true.
#include <cstddef>
#include <cstdint>

namespace clock {

uint64_t monotonic_ns();
enum class Source : uint8_t { None, Rtc, BootArgument, Sntp };
void set_wall_clock(int64_t unix_seconds, Source source = Source::Rtc); // anchors "now"
bool wall_clock_known();
Source source();
const char* source_name(); // "rtc", "boot argument", "sntp", "not set"
int64_t unix_seconds();    // 0 when unknown
uint64_t unix_ms();        // the same in milliseconds
// Writes RFC 3339 UTC ("2026-11-22T08:00:00Z") into out (>= 21 bytes); "unknown" if unset.
void rfc3339_now(char* out, size_t cap);

} // namespace clock

#pragma once
// Calendar arithmetic for UTC timestamps (proleptic Gregorian, days counted from 1970-01-01),
// used for RFC 3339 strings in logs, audit records and the error envelope.
#include <cstddef>
#include <cstdint>

namespace ktl {

struct CivilTime {
    int64_t year = 1970;
    uint32_t month = 1; // 1..12
    uint32_t day = 1;   // 1..31
    uint32_t hour = 0, minute = 0, second = 0;
};

// Days since 1970-01-01 -> (year, month, day), using 400-year eras so every step is exact.
constexpr CivilTime civil_from_days(int64_t days) {
    days += 719468; // shift the epoch to 0000-03-01
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    uint32_t doe = static_cast<uint32_t>(days - era * 146097);            // day of era
    uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; // year of era
    uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               // day of year (from March)
    uint32_t mp = (5 * doy + 2) / 153;
    CivilTime t;
    t.day = doy - (153 * mp + 2) / 5 + 1;
    t.month = mp < 10 ? mp + 3 : mp - 9;
    t.year = static_cast<int64_t>(yoe) + era * 400 + (t.month <= 2 ? 1 : 0);
    return t;
}

constexpr int64_t days_from_civil(int64_t y, uint32_t m, uint32_t d) {
    y -= m <= 2 ? 1 : 0;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    uint32_t yoe = static_cast<uint32_t>(y - era * 400);
    uint32_t mp = m > 2 ? m - 3 : m + 9;
    uint32_t doy = (153 * mp + 2) / 5 + d - 1;
    uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

constexpr CivilTime civil_from_unix(int64_t seconds) {
    int64_t days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
    int64_t rem = seconds - days * 86400;
    CivilTime t = civil_from_days(days);
    t.hour = static_cast<uint32_t>(rem / 3600);
    t.minute = static_cast<uint32_t>((rem % 3600) / 60);
    t.second = static_cast<uint32_t>(rem % 60);
    return t;
}

constexpr size_t kRfc3339Len = 20; // "YYYY-MM-DDTHH:MM:SSZ"

// Writes "2026-11-22T08:00:00Z" (years 0..9999) plus NUL; out must hold kRfc3339Len + 1 bytes.
// Returns false (and writes "invalid") for years outside 0..9999.
bool format_rfc3339(int64_t unix_seconds, char* out, size_t cap);

} // namespace ktl

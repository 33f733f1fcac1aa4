#pragma once
// Unsigned decimal numbers to text, and from untrusted text (boot arguments, headers, specs): digits only, no
// sign, no spaces, no leading '+'; false on anything else or on overflow, with out untouched.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ktl {

inline bool parse_decimal(std::string_view s, uint64_t& out) {
    if (s.empty())
        return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        auto d = static_cast<uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

// The decimal digits of v, written right-aligned into buf; the view of them.
inline std::string_view format_decimal(uint64_t v, char (&buf)[20]) { // UINT64_MAX has 20
    size_t at = sizeof buf;
    do {
        buf[--at] = char('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return { buf + at, sizeof buf - at };
}

inline bool parse_decimal(std::string_view s, uint32_t& out) {
    uint64_t v;
    if (!parse_decimal(s, v) || v > UINT32_MAX)
        return false;
    out = static_cast<uint32_t>(v);
    return true;
}

} // namespace ktl

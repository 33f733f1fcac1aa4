#pragma once
// What lib/text's tables share: the hash of a byte string (FNV-1a, 32 bits) and the size of an
// open-addressing table for n entries (a power of two, at least twice n: a free place always
// exists, probes stay short).
#include <cstdint>
#include <string_view>

namespace text::detail {

inline uint32_t fnv1a(std::string_view s) {
    uint32_t h = 2166136261u;
    for (char c : s) {
        h ^= static_cast<uint8_t>(c);
        h *= 16777619u;
    }
    return h;
}

inline uint32_t table_size(uint32_t entries) {
    uint32_t n = 16;
    while (n < 2 * entries)
        n <<= 1;
    return n;
}

} // namespace text::detail

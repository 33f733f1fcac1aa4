#pragma once
// Non-throwing string_view slicing for lib/dtb. std::string_view::substr and find can call
// std::__throw_out_of_range_fmt and memchr; these are plain bounded byte loops.
#include <cstddef>
#include <string_view>

namespace dtb::text {

// Index of the first `c` in `s`, or s.size() when there is none.
constexpr size_t index_of(std::string_view s, char c) {
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == c)
            return i;
    }
    return s.size();
}

// The first n bytes of s (all of s when shorter).
constexpr std::string_view head(std::string_view s, size_t n) {
    return std::string_view(s.data(), n < s.size() ? n : s.size());
}

// s without its first pos bytes (empty when pos >= size).
constexpr std::string_view tail(std::string_view s, size_t pos) {
    return pos < s.size() ? std::string_view(s.data() + pos, s.size() - pos) : std::string_view();
}

constexpr bool contains(std::string_view s, char c) { return index_of(s, c) < s.size(); }

} // namespace dtb::text

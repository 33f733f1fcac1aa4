#pragma once
// Cutting text to fit without breaking a character: what is cut must stay valid UTF-8, or the
// JSON writer (which refuses invalid text) drops the whole value.
#include <cstddef>
#include <string_view>

namespace ktl {

// The length of the longest prefix of s of at most max bytes that ends between characters
// (never inside a multi-byte sequence). s itself is assumed valid UTF-8.
constexpr size_t utf8_prefix(std::string_view s, size_t max) {
    size_t n = s.size() < max ? s.size() : max;
    while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80)
        --n;
    return n;
}

// Copies the longest prefix of src that fits cap - 1 bytes between characters into dst (cap > 0)
// and ends it with a NUL; returns the bytes copied.
constexpr size_t utf8_copy(char* dst, size_t cap, std::string_view src) {
    size_t n = utf8_prefix(src, cap - 1);
    for (size_t i = 0; i < n; ++i)
        dst[i] = src[i];
    dst[n] = '\0';
    return n;
}

// The same into a fixed field.
template <size_t N>
constexpr size_t utf8_copy(char (&dst)[N], std::string_view src) {
    return utf8_copy(dst, N, src);
}

// The text of a fixed field as utf8_copy filled it: up to its NUL, or the whole field.
template <size_t N>
constexpr std::string_view field_text(const char (&field)[N]) {
    size_t n = 0;
    while (n < N && field[n])
        ++n;
    return { field, n };
}

} // namespace ktl

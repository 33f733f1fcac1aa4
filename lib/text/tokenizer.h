#pragma once
// Words of a text, as the lexical index and the embedder see them (issue 37; docs/documents.md).
// A token is a run of ASCII letters and digits, lower-cased, or of bytes >= 0x80 (UTF-8 letters
// of other scripts, kept as they are, so "café" is one token); every other byte separates
// tokens. A token longer than kMaxTokenBytes keeps its first kMaxTokenBytes bytes (two long words
// sharing them are one token: rare, and bounded work per word is worth it). Nothing is
// allocated; a text of n bytes is read once.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace text {

constexpr size_t kMaxTokenBytes = 32;

namespace detail {
inline bool word_byte(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}
inline char lower(uint8_t c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c); }
} // namespace detail

// Calls f(std::string_view token) for each token of `text` in order (the view is valid during
// the call only); f returns false to stop. Returns the number of tokens visited.
template <typename F>
size_t for_each_token(std::string_view text, F&& f) {
    char buf[kMaxTokenBytes];
    size_t n = 0, count = 0;
    const size_t size = text.size();
    for (size_t i = 0; i <= size; ++i) {
        const auto c = i < size ? static_cast<uint8_t>(text[i]) : uint8_t(' ');
        if (detail::word_byte(c)) {
            if (n < kMaxTokenBytes)
                buf[n] = detail::lower(c);
            ++n;
            continue;
        }
        if (n == 0)
            continue;
        ++count;
        const size_t len = n < kMaxTokenBytes ? n : kMaxTokenBytes;
        n = 0;
        if (!f(std::string_view(buf, len)))
            return count;
    }
    return count;
}

// The number of tokens in `text`.
size_t token_count(std::string_view text);
// Whether `word` is one token exactly as the tokenizer gives it (lower-case, whole, not cut).
bool is_token(std::string_view word);

} // namespace text

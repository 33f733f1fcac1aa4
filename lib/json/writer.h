#pragma once
// Bounded JSON writer over a caller's buffer. Commas and nesting are tracked, misuse (a value
// without a key inside an object, an unbalanced end, NaN) is an error, and output past the
// buffer is refused rather than written: check ok() / error() at the end.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace json {

class Writer {
public:
    static constexpr uint32_t kMaxDepth = 32;

    explicit Writer(std::span<char> out) : m_out(out) {}

    Writer& begin_object();
    Writer& end_object();
    Writer& begin_array();
    Writer& end_array();
    Writer& key(std::string_view k);
    // Strings must be valid UTF-8 (anything else is refused: the output stays valid JSON).
    Writer& string(std::string_view s);
    Writer& number(int64_t v);
    Writer& number(uint64_t v);
    Writer& number(int v) { return number(static_cast<int64_t>(v)); }
    Writer& number(uint32_t v) { return number(static_cast<uint64_t>(v)); }
    // Shortest text that reads back to the same double; NaN and infinities are refused.
    Writer& number(double v);
    // Shortest text that reads back (as a float) to the same float: at most 9 digits where the
    // float as a double takes up to 17 (0.1f is "0.1", not "0.10000000149011612").
    Writer& number_f32(float v);
    Writer& boolean(bool v);
    Writer& null();
    // A pre-serialised value, inserted as is (the caller vouches for it).
    Writer& raw(std::string_view json);
    // Pre-serialised members ("a":1,"b":2) into the open object, as is (the caller vouches for
    // them); nothing when empty.
    Writer& raw_members(std::string_view members);
    // A string whose body is already JSON-escaped (e.g. echoing a parsed string verbatim).
    Writer& raw_string(std::string_view escaped_body);

    bool ok() const { return m_error == ktl::Error::None; }
    ktl::Error error() const { return m_error; }
    // Complete when every container is closed and exactly one top-level value was written.
    bool complete() const { return ok() && m_depth == 0 && m_top_done; }
    std::string_view view() const { return { m_out.data(), m_len }; }
    size_t size() const { return m_len; }

private:
    bool before_value();
    void put(char c);
    void put(std::string_view s);
    void put_quoted(std::string_view s); // escaped, with the quotes
    void fail(ktl::Error e) {
        if (m_error == ktl::Error::None)
            m_error = e;
    }

    std::span<char> m_out;
    size_t m_len = 0;
    ktl::Error m_error = ktl::Error::None;
    uint32_t m_depth = 0;
    bool m_object[kMaxDepth] = {};
    uint32_t m_count[kMaxDepth] = {};
    bool m_have_key = false;
    bool m_top_done = false;
};

// True when s is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s);

} // namespace json

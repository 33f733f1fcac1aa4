#pragma once
// JSON pointers (RFC 6901) built in place in Failure::path as the validator walks down, and cut
// back as it returns. A pointer that does not fit ends in "...", cut on a UTF-8 character
// boundary (the path is sent back in JSON text). Internal to mcp/schema.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <json/json.h>
#include <mcp/schema/validator.h>
#include <ktl/decimal.h>

namespace mcp::schema {

class Pointer {
public:
    struct Mark {
        size_t length;
        bool cut;
    };

    explicit Pointer(char (&buf)[kMaxPointer]) : m_buf(buf) { reset({ 0, false }); }

    Mark mark() const { return { m_length, m_cut }; }
    void reset(Mark m) {
        m_length = m.length;
        m_cut = m.cut;
        m_buf[m_length] = '\0';
    }

    void push_index(uint32_t index) {
        char digits[20];
        put('/');
        for (char c : ktl::format_decimal(index, digits))
            put(c);
    }

    // A reference token (unescaped text), with '~' and '/' escaped (RFC 6901 section 3).
    // complete == false: the token was longer than what is given; the pointer is cut after it.
    void push_token(std::string_view token, bool complete = true) {
        put('/');
        for (char c : token) {
            if (c == '\0') { // cannot live in a C string: cut here
                complete = false;
                break;
            }
            if (c == '~') {
                put('~');
                put('0');
            } else if (c == '/') {
                put('~');
                put('1');
            } else {
                put(c);
            }
        }
        if (!complete)
            cut();
    }

    // The key of an object member. Only a pointer's worth of it can be shown: unescape() stops
    // before the first code point that does not fit, so the zero-filled buffer then holds a
    // prefix of whole characters. Out of line: the buffer stays out of the recursive frames.
    [[gnu::noinline]] void push_key(const json::Value& member) {
        char key[kMaxPointer] = {};
        auto n = member.key_into({ key, sizeof key });
        if (n) {
            push_token({ key, *n });
            return;
        }
        size_t length = 0;
        while (length < sizeof key && key[length] != '\0')
            ++length;
        push_token({ key, length }, false);
    }

private:
    void put(char c) {
        if (m_cut)
            return;
        if (m_length + 1 < kMaxPointer) {
            m_buf[m_length++] = c;
            m_buf[m_length] = '\0';
            return;
        }
        cut();
    }

    void cut() {
        if (m_cut)
            return;
        size_t at = m_length < kMaxPointer - 4 ? m_length : kMaxPointer - 4;
        while (at > 0 && (static_cast<uint8_t>(m_buf[at]) & 0xc0) == 0x80)
            --at; // m_buf[at] continues a character begun before it
        m_buf[at] = m_buf[at + 1] = m_buf[at + 2] = '.';
        m_buf[at + 3] = '\0';
        m_length = at + 3;
        m_cut = true;
    }

    char (&m_buf)[kMaxPointer];
    size_t m_length = 0;
    bool m_cut = false;
};

} // namespace mcp::schema

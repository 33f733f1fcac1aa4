#pragma once
// A streaming base64 reader (RFC 4648 section 4, standard alphabet, '=' padding required to a
// multiple of four characters, no whitespace): bytes come out in order, a few at a time, so a
// large payload is decoded in bounded pieces without a buffer for all of it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ktl {

// Encoded length of n bytes (with padding).
constexpr size_t base64_size(size_t n) { return (n + 2) / 3 * 4; }

// Writes base64_size(n) characters of `in` into out; returns that count.
inline size_t base64_encode(const uint8_t* in, size_t n, char* out) {
    constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        size_t left = n - i;
        uint32_t v = uint32_t(in[i]) << 16;
        if (left > 1)
            v |= uint32_t(in[i + 1]) << 8;
        if (left > 2)
            v |= in[i + 2];
        out[o++] = kAlphabet[(v >> 18) & 63];
        out[o++] = kAlphabet[(v >> 12) & 63];
        out[o++] = left > 1 ? kAlphabet[(v >> 6) & 63] : '=';
        out[o++] = left > 2 ? kAlphabet[v & 63] : '=';
    }
    return o;
}

class Base64Reader {
public:
    explicit Base64Reader(std::string_view text) : m_text(text) {}

    // Bytes the whole text decodes to (0 unless its length is a multiple of four); characters
    // and padding are checked while reading.
    size_t decoded_size() const {
        size_t n = m_text.size();
        if (n % 4 != 0)
            return 0;
        size_t pad = 0;
        if (n >= 1 && m_text[n - 1] == '=')
            ++pad;
        if (n >= 2 && m_text[n - 2] == '=')
            ++pad;
        return n / 4 * 3 - pad;
    }
    // Decodes up to `n` further bytes into out; returns how many (fewer only at the end or on
    // an error, after which failed() is true).
    size_t read(uint8_t* out, size_t n) {
        size_t got = 0;
        while (got < n && !m_failed) {
            if (m_bits >= 8) {
                m_bits -= 8;
                out[got++] = static_cast<uint8_t>(m_acc >> m_bits);
                continue;
            }
            if (m_pos >= m_text.size())
                break;
            char c = m_text[m_pos];
            if (c == '=') {
                // Padding: only the last one or two characters of a text of whole groups.
                size_t rest = m_text.size() - m_pos;
                m_failed = m_text.size() % 4 != 0 || rest > 2 || (rest == 2 && m_text[m_pos + 1] != '=');
                m_pos = m_text.size();
                break;
            }
            int v = value(c);
            if (v < 0) {
                m_failed = true;
                break;
            }
            ++m_pos;
            m_acc = (m_acc << 6) | static_cast<uint32_t>(v);
            m_bits += 6;
        }
        return got;
    }
    bool failed() const { return m_failed; }

private:
    static int value(char c) {
        if (c >= 'A' && c <= 'Z')
            return c - 'A';
        if (c >= 'a' && c <= 'z')
            return c - 'a' + 26;
        if (c >= '0' && c <= '9')
            return c - '0' + 52;
        if (c == '+')
            return 62;
        if (c == '/')
            return 63;
        return -1;
    }

    std::string_view m_text;
    size_t m_pos = 0;
    uint32_t m_acc = 0; // only the low m_bits bits matter
    uint32_t m_bits = 0;
    bool m_failed = false;
};

// The whole of `text` decoded into out: the byte count, or nullopt when it is not valid base64
// (padding included) or does not fit.
inline std::optional<size_t> base64_decode(std::string_view text, std::span<uint8_t> out) {
    Base64Reader reader(text);
    size_t n = reader.decoded_size();
    if ((n == 0 && !text.empty()) || n > out.size() || reader.read(out.data(), n) != n || reader.failed())
        return std::nullopt;
    return n;
}

} // namespace ktl

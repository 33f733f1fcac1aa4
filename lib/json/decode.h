#pragma once
// Streaming decoder for the body of a JSON string (between the quotes, already validated or
// not): yields UTF-8 bytes one code point at a time, so strings can be compared and copied
// without a buffer of their full size.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace json {

class StringDecoder {
public:
    explicit StringDecoder(std::string_view raw) : m_raw(raw) {}
    // Writes the next code point's UTF-8 bytes into out; returns their count, 0 at the end,
    // -1 on a malformed escape or lone surrogate.
    int next(char out[4]);

private:
    int hex4(size_t at, uint32_t& value) const;
    std::string_view m_raw;
    size_t m_pos = 0;
};

// Encodes one code point (<= 0x10FFFF, not a surrogate) as UTF-8; returns the byte count.
int encode_utf8(uint32_t cp, char out[4]);

} // namespace json

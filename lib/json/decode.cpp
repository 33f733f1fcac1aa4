#include "decode.h"

namespace json {

int encode_utf8(uint32_t cp, char out[4]) {
    if (cp < 0x80) {
        out[0] = static_cast<char>(cp);
        return 1;
    }
    if (cp < 0x800) {
        out[0] = static_cast<char>(0xc0 | (cp >> 6));
        out[1] = static_cast<char>(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = static_cast<char>(0xe0 | (cp >> 12));
        out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out[2] = static_cast<char>(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = static_cast<char>(0xf0 | (cp >> 18));
    out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out[3] = static_cast<char>(0x80 | (cp & 0x3f));
    return 4;
}

int StringDecoder::hex4(size_t at, uint32_t& value) const {
    if (at + 4 > m_raw.size())
        return -1;
    value = 0;
    for (size_t i = 0; i < 4; ++i) {
        char c = m_raw[at + i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = uint32_t(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = uint32_t(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = uint32_t(c - 'A' + 10);
        else
            return -1;
        value = value * 16 + d;
    }
    return 0;
}

int StringDecoder::next(char out[4]) {
    if (m_pos >= m_raw.size())
        return 0;
    char c = m_raw[m_pos];
    if (c != '\\') {
        // Copy one UTF-8 sequence as is (its validity was checked by the parser).
        auto b = static_cast<uint8_t>(c);
        int n = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
        if (m_pos + size_t(n) > m_raw.size())
            return -1;
        for (int i = 0; i < n; ++i)
            out[i] = m_raw[m_pos + size_t(i)];
        m_pos += size_t(n);
        return n;
    }
    if (m_pos + 1 >= m_raw.size())
        return -1;
    char e = m_raw[m_pos + 1];
    m_pos += 2;
    switch (e) {
    case '"': out[0] = '"'; return 1;
    case '\\': out[0] = '\\'; return 1;
    case '/': out[0] = '/'; return 1;
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': {
        uint32_t cp;
        if (hex4(m_pos, cp) != 0)
            return -1;
        m_pos += 4;
        if (cp >= 0xdc00 && cp <= 0xdfff)
            return -1; // lone low surrogate
        if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t low;
            if (m_pos + 6 > m_raw.size() || m_raw[m_pos] != '\\' || m_raw[m_pos + 1] != 'u' ||
                hex4(m_pos + 2, low) != 0 || low < 0xdc00 || low > 0xdfff)
                return -1; // high surrogate without its pair
            m_pos += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        return encode_utf8(cp, out);
    }
    default: return -1;
    }
}

} // namespace json

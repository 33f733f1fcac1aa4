#include "literals.h"

namespace mcp::schema {

// ---------------------------------------------------------------------------------------------
// Strings (RFC 8259 section 7).

bool CodePoints::next(uint32_t& cp) {
    if (m_pos >= m_raw.size())
        return false;
    auto lead = static_cast<uint8_t>(m_raw[m_pos]);
    if (lead != '\\')
        return utf8(lead, cp);
    if (m_pos + 1 >= m_raw.size())
        return replacement(cp);
    char e = m_raw[m_pos + 1];
    m_pos += 2;
    switch (e) {
    case 'b': cp = '\b'; return true;
    case 'f': cp = '\f'; return true;
    case 'n': cp = '\n'; return true;
    case 'r': cp = '\r'; return true;
    case 't': cp = '\t'; return true;
    case 'u': return unicode_escape(cp);
    default: cp = static_cast<uint8_t>(e); return true; // '"', '\\', '/'
    }
}

bool CodePoints::replacement(uint32_t& cp) {
    m_pos = m_raw.size();
    cp = 0xfffd;
    return true;
}

bool CodePoints::utf8(uint8_t lead, uint32_t& cp) {
    size_t n = lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    if (m_pos + n > m_raw.size())
        return replacement(cp);
    cp = n == 1 ? lead : lead & (0x7fu >> n);
    for (size_t i = 1; i < n; ++i)
        cp = (cp << 6) | (static_cast<uint8_t>(m_raw[m_pos + i]) & 0x3fu);
    m_pos += n;
    return true;
}

bool CodePoints::hex4(size_t at, uint32_t& value) const {
    if (at + 4 > m_raw.size())
        return false;
    value = 0;
    for (size_t i = at; i < at + 4; ++i) {
        char c = m_raw[i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = static_cast<uint32_t>(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = static_cast<uint32_t>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = static_cast<uint32_t>(c - 'A' + 10);
        else
            return false;
        value = value * 16 + d;
    }
    return true;
}

// After "\u": four hex digits, and for a high surrogate the "\uXXXX" of its low half.
bool CodePoints::unicode_escape(uint32_t& cp) {
    if (!hex4(m_pos, cp))
        return replacement(cp);
    m_pos += 4;
    if (cp < 0xd800 || cp > 0xdfff)
        return true;
    uint32_t low = 0;
    if (cp > 0xdbff || m_pos + 6 > m_raw.size() || m_raw[m_pos] != '\\' || m_raw[m_pos + 1] != 'u' ||
        !hex4(m_pos + 2, low) || low < 0xdc00 || low > 0xdfff) {
        cp = 0xfffd;
        return true;
    }
    m_pos += 6;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    return true;
}

uint64_t code_point_count(std::string_view raw) {
    CodePoints it(raw);
    uint64_t n = 0;
    for (uint32_t cp = 0; it.next(cp);)
        ++n;
    return n;
}

bool same_string(std::string_view raw_a, std::string_view raw_b) {
    CodePoints a(raw_a), b(raw_b);
    uint32_t x = 0, y = 0;
    for (;;) {
        bool more_a = a.next(x), more_b = b.next(y);
        if (more_a != more_b)
            return false;
        if (!more_a)
            return true;
        if (x != y)
            return false;
    }
}

static bool name_char(uint32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == ':' || c == '-';
}

bool good_name(std::string_view raw, bool path) {
    CodePoints it(raw);
    bool segment_start = true;
    uint32_t previous = 0;
    for (uint32_t cp = 0; it.next(cp); previous = cp) {
        if (path && cp == '/') {
            if (segment_start)
                return false; // a leading '/' or an empty segment
            segment_start = true;
            continue;
        }
        if (!name_char(cp))
            return false;
        if (cp == '.' && (segment_start || previous == '.'))
            return false; // a hidden (or "." / "..") segment, or ".." inside one
        segment_start = false;
    }
    return !segment_start; // empty, or a trailing '/'
}

// ---------------------------------------------------------------------------------------------
// Numbers (RFC 8259 section 6): -?int(.frac)?([eE][+-]?digits)?

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<Decimal> parse_decimal(std::string_view lit) {
    Decimal d;
    size_t i = 0, n = lit.size();
    if (i < n && lit[i] == '-') {
        d.negative = true;
        ++i;
    }
    size_t start = i;
    while (i < n && is_digit(lit[i]))
        ++i;
    d.int_digits = static_cast<uint32_t>(i - start);
    if (d.int_digits == 0)
        return std::nullopt;
    uint32_t fraction = 0;
    if (i < n && lit[i] == '.') {
        ++i;
        for (; i < n && is_digit(lit[i]); ++i)
            ++fraction;
        if (fraction == 0)
            return std::nullopt;
    }
    d.mantissa = lit.substr(start, i - start);
    int64_t exponent = 0;
    if (i < n && (lit[i] == 'e' || lit[i] == 'E')) {
        ++i;
        bool negative = false;
        if (i < n && (lit[i] == '+' || lit[i] == '-'))
            negative = lit[i++] == '-';
        size_t digits = i;
        for (; i < n && is_digit(lit[i]); ++i)
            if (exponent < kExponentClamp)
                exponent = exponent * 10 + (lit[i] - '0');
        if (i == digits)
            return std::nullopt;
        if (exponent > kExponentClamp)
            exponent = kExponentClamp;
        if (negative)
            exponent = -exponent;
    }
    if (i != n)
        return std::nullopt;
    uint32_t total = d.int_digits + fraction;
    uint32_t first = total, last = 0;
    for (uint32_t k = 0; k < total; ++k) {
        if (d.digit(k) != '0') {
            if (first == total)
                first = k;
            last = k;
        }
    }
    if (first == total)
        return d; // zero, whatever its sign or exponent
    d.zero = false;
    d.first = first;
    d.count = last - first + 1;
    d.point = static_cast<int64_t>(d.int_digits) - static_cast<int64_t>(first) + exponent;
    return d;
}

int compare(const Decimal& a, const Decimal& b) {
    int sa = a.zero ? 0 : a.negative ? -1 : 1;
    int sb = b.zero ? 0 : b.negative ? -1 : 1;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (sa == 0)
        return 0;
    int magnitude = 0;
    if (a.point != b.point) {
        magnitude = a.point < b.point ? -1 : 1;
    } else {
        // Same leading position: the digits decide, the shorter one padded with zeros.
        uint32_t n = a.count > b.count ? a.count : b.count;
        for (uint32_t k = 0; k < n && magnitude == 0; ++k) {
            char x = k < a.count ? a.digit(a.first + k) : '0';
            char y = k < b.count ? b.digit(b.first + k) : '0';
            magnitude = x < y ? -1 : x > y ? 1 : 0;
        }
    }
    return sa * magnitude;
}

bool schema_number(const Decimal& d) {
    return d.zero || (d.point <= kSchemaPointLimit && d.point >= -kSchemaPointLimit);
}

} // namespace mcp::schema

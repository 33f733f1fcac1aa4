#pragma once
// Character classes and small text helpers of RFC 9110 section 5.6, shared by the request
// reader and the field helpers. Internal to lib/http.
#include <cstdint>
#include <string_view>

#include <ktl/decimal.h>

namespace http::detail {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline bool is_ows(char c) { return c == ' ' || c == '\t'; }

// tchar (RFC 9110 section 5.6.2): what methods, field names and media types are made of.
inline bool is_tchar(char c) {
    if (is_digit(c) || is_alpha(c))
        return true;
    switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~': return true;
    default: return false;
    }
}

inline bool is_token(std::string_view s) {
    if (s.empty())
        return false;
    for (char c : s)
        if (!is_tchar(c))
            return false;
    return true;
}

// field-vchar / SP / HTAB (RFC 9110 section 5.5): everything but the other controls and DEL.
// obs-text (0x80-0xFF) is allowed because the grammar allows it; nothing here interprets it.
inline bool is_field_char(char c) {
    auto u = static_cast<uint8_t>(c);
    return c == '\t' || (u >= 0x20 && u != 0x7f);
}

inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

inline bool equals_ci(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

inline bool starts_with_ci(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && equals_ci(s.substr(0, prefix.size()), prefix);
}

// Strips a leading "http://" or "https://" (schemes are case-insensitive, RFC 3986 section
// 3.1) and gives that scheme's default port; false for anything else.
inline bool strip_http_scheme(std::string_view& s, uint16_t& default_port) {
    if (starts_with_ci(s, "http://")) {
        s.remove_prefix(7);
        default_port = 80;
        return true;
    }
    if (starts_with_ci(s, "https://")) {
        s.remove_prefix(8);
        default_port = 443;
        return true;
    }
    return false;
}

inline std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && is_ows(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_ows(s.back()))
        s.remove_suffix(1);
    return s;
}

// Decimal digits only (no sign, no spaces) into a uint64_t; false on anything else or overflow.
inline bool parse_decimal(std::string_view s, uint64_t& out) { return ktl::parse_decimal(s, out); }

} // namespace http::detail

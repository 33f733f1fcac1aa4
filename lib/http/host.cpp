// Host and Origin values (RFC 9110 section 7.2, RFC 3986 section 3.2.2, RFC 6454 section 7).
#include "fields.h"

#include "chars.h"

namespace http {

using namespace detail;

namespace {

// dec-octet "." dec-octet "." dec-octet "." dec-octet, written canonically.
bool valid_ipv4(std::string_view s) {
    int parts = 0;
    size_t i = 0;
    while (parts < 4) {
        size_t start = i;
        unsigned value = 0;
        while (i < s.size() && is_digit(s[i]) && i - start < 3)
            value = value * 10 + unsigned(s[i++] - '0');
        size_t digits = i - start;
        if (digits == 0 || value > 255 || (digits > 1 && s[start] == '0'))
            return false;
        if (++parts < 4) {
            if (i >= s.size() || s[i] != '.')
                return false;
            ++i;
        }
    }
    return i == s.size();
}

// RFC 3986 IPv6address: eight 16-bit groups, one "::" standing for one or more zero groups,
// the last two groups optionally written as an IPv4 address.
bool valid_ipv6(std::string_view s) {
    if (s.empty() || (s[0] == ':' && (s.size() < 2 || s[1] != ':')))
        return false;
    int groups = 0;
    bool compressed = false;
    size_t i = 0;
    if (s.substr(0, 2) == "::") {
        compressed = true;
        i = 2;
    }
    while (i < s.size()) { // each pass consumes a group and its separator
        size_t j = i;
        while (j < s.size() && is_hex(s[j]))
            ++j;
        if (j < s.size() && s[j] == '.') {
            if (!valid_ipv4(s.substr(i)))
                return false;
            groups += 2;
            break;
        }
        if (j == i || j - i > 4 || ++groups > 8)
            return false;
        if (j == s.size())
            break;
        if (s[j] != ':')
            return false;
        if (j + 1 < s.size() && s[j + 1] == ':') {
            if (compressed)
                return false;
            compressed = true;
            i = j + 2;
        } else if (j + 1 == s.size()) {
            return false; // a trailing single colon
        } else {
            i = j + 1;
        }
    }
    return compressed ? groups <= 7 : groups == 8;
}

bool is_reg_name_char(char c) {
    if (is_alpha(c) || is_digit(c))
        return true;
    switch (c) {
    case '-':
    case '.':
    case '_':
    case '~': // unreserved
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*': // sub-delims
    case '+':
    case ',':
    case ';':
    case '=': return true;
    default: return false;
    }
}

// reg-name (with pct-encoded octets), refusing the all-numeric names that resolvers would
// read as an address in another notation.
bool valid_reg_name(std::string_view s) {
    if (s.empty())
        return false;
    bool numeric = true;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        numeric = numeric && (is_digit(c) || c == '.');
        if (c == '%') {
            if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2]))
                return false;
            i += 2;
        } else if (!is_reg_name_char(c)) {
            return false;
        }
    }
    return !numeric || valid_ipv4(s);
}

bool parse_port(std::string_view s, uint16_t& port) {
    uint64_t value = 0;
    if (s.size() > 5 || !parse_decimal(s, value) || value > 65535)
        return false;
    port = uint16_t(value);
    return true;
}

std::string_view without_brackets(std::string_view host) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        return host.substr(1, host.size() - 2);
    return host;
}

} // namespace

std::optional<HostPort> parse_host(std::string_view value) {
    HostPort out;
    std::string_view rest;
    if (!value.empty() && value.front() == '[') {
        size_t close = value.find(']');
        if (close == std::string_view::npos || !valid_ipv6(value.substr(1, close - 1)))
            return std::nullopt;
        out.host = value.substr(0, close + 1);
        rest = value.substr(close + 1);
    } else {
        out.host = value.substr(0, value.find(':'));
        if (!valid_reg_name(out.host))
            return std::nullopt;
        rest = value.substr(out.host.size());
    }
    if (rest.empty())
        return out;
    if (rest.front() != ':' || !parse_port(rest.substr(1), out.port))
        return std::nullopt;
    out.has_port = true;
    return out;
}

std::optional<HostPort> parse_origin(std::string_view origin) {
    // "null" (an opaque origin) has no "://" and is refused with the other shapes.
    uint16_t default_port = 0;
    if (!strip_http_scheme(origin, default_port))
        return std::nullopt;
    auto host = parse_host(origin);
    if (host && !host->has_port)
        host->port = default_port;
    return host;
}

bool host_allowed(std::string_view host, std::span<const std::string_view> allowlist) {
    auto parsed = parse_host(host);
    if (!parsed)
        return false;
    std::string_view name = without_brackets(parsed->host);
    for (std::string_view entry : allowlist)
        if (equals_ci(without_brackets(entry), name))
            return true;
    return false;
}

} // namespace http

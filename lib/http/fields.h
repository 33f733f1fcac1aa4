#pragma once
// Pure helpers for the field values an MCP Streamable HTTP server checks: Accept, Content-Type,
// Authorization, Host, Origin, Connection. Each takes one field value (OWS already trimmed, as
// Head gives it) and never allocates.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace http {

// ASCII case-insensitive equality (field names, tokens, schemes).
bool token_equals_ci(std::string_view a, std::string_view b);

// The elements of a comma-separated list (RFC 9110 section 5.6.1), OWS trimmed, empty
// elements skipped; a separator inside a quoted string does not split. With ';' as the
// separator it walks the parameters of one element (section 5.6.6).
//   ListReader r(value); while (auto e = r.next()) ...
class ListReader {
public:
    explicit ListReader(std::string_view list, char separator = ',') : m_rest(list), m_separator(separator) {}
    std::optional<std::string_view> next();

private:
    std::string_view m_rest;
    char m_separator;
};

// Whether a list holds a token, case-insensitively ("Connection: keep-alive, Upgrade").
bool list_contains(std::string_view list, std::string_view token);

// RFC 9110 section 12.5.1: whether an Accept value admits `media_type` ("type/subtype").
// The most specific matching range decides (type/subtype over type/* over */*); its q=0 means
// "not acceptable". Parameters other than q are ignored; malformed elements are skipped. An
// absent or empty Accept is the caller's decision.
bool accepts(std::string_view accept_header, std::string_view media_type);

// Content-Type's type/subtype equals `media_type`, case-insensitively; parameters ignored.
bool media_type_is(std::string_view content_type, std::string_view media_type);

// The token of "Authorization: Bearer <token68>" (RFC 6750 section 2.1; scheme case-insensitive,
// one or more spaces); nullopt for any other scheme or shape.
std::optional<std::string_view> bearer_token(std::string_view authorization);

struct HostPort {
    std::string_view host; // reg-name, dotted IPv4, or "[IPv6]" with its brackets, as sent
    uint16_t port = 0;
    bool has_port = false;
};

// A Host value: uri-host [":" port] (RFC 9110 section 7.2). Refuses an empty host, userinfo,
// an empty port, a port above 65535, IPvFuture and IPv6 zone ids, and all-numeric hosts that
// are not a plain dotted quad (each 0-255, no leading zeros: "127.1" and "0177.0.0.1" are what
// inet_aton would reinterpret).
std::optional<HostPort> parse_host(std::string_view host_header);

// An Origin value "scheme://host[:port]" with scheme http or https and nothing after; without
// a port, port is 80 or 443 and has_port false. The opaque origin "null" gives nullopt.
std::optional<HostPort> parse_origin(std::string_view origin);

// The DNS-rebinding guard: the host of a Host value (port ignored) equals one of `allowlist`,
// case-insensitively and textually (no address canonicalisation: "::1" does not match
// "0:0:0:0:0:0:0:1"). IPv6 entries may be written with or without brackets. A value that is
// not a valid Host is never allowed.
bool host_allowed(std::string_view host, std::span<const std::string_view> allowlist);

} // namespace http

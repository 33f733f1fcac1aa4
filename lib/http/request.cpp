// RFC 9112 request-head reader. Section numbers are RFC 9112 unless marked RFC 9110.
#include "request.h"

#include "chars.h"
#include "fields.h"
#include "line_scanner.h"

namespace http {
namespace {

using namespace detail;

ParseResult fail(uint16_t status, const char* reason) { return { Parse::Error, status, reason }; }

constexpr ParseResult kOk { Parse::Complete };

struct MethodName {
    std::string_view text;
    Method method;
};

constexpr MethodName kMethods[] = {
    { "GET", Method::Get },       { "HEAD", Method::Head },       { "POST", Method::Post },   { "PUT", Method::Put },
    { "DELETE", Method::Delete }, { "OPTIONS", Method::Options }, { "PATCH", Method::Patch },
};

Method method_from(std::string_view text) {
    for (const auto& m : kMethods)
        if (m.text == text) // section 3.1: methods are case-sensitive
            return m.method;
    return Method::Other;
}

// Visible ASCII only: URIs are ASCII (RFC 3986), and a fragment is never sent (RFC 9110 4.2.4).
bool target_chars_ok(std::string_view target) {
    for (char c : target)
        if (c <= ' ' || c > '~' || c == '#')
            return false;
    return true;
}

void split_query(std::string_view path_and_query, Head& out) {
    size_t q = path_and_query.find('?');
    out.path = path_and_query.substr(0, q);
    out.query = q == std::string_view::npos ? std::string_view() : path_and_query.substr(q + 1);
}

// Section 3.2: origin-form, absolute-form, or asterisk-form for OPTIONS. authority-form is
// for CONNECT through a proxy, which this server is not.
ParseResult parse_target(std::string_view target, Head& out) {
    if (target == "*") {
        if (out.method != Method::Options)
            return fail(400, "asterisk-form without OPTIONS");
        out.path = target;
        return kOk;
    }
    if (target.front() == '/') {
        split_query(target, out);
        return kOk;
    }
    std::string_view rest = target;
    uint16_t default_port = 0;
    if (!strip_http_scheme(rest, default_port))
        return fail(400, "bad target");
    size_t end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, end);
    if (!parse_host(authority))
        return fail(400, "bad target authority");
    out.authority = authority;
    split_query(rest.substr(authority.size()), out);
    if (out.path.empty())
        out.path = "/"; // RFC 9110 section 4.2.3: an empty path is "/"
    return kOk;
}

// Section 2.3: "HTTP/" DIGIT "." DIGIT. A well-formed version other than 1.0 and 1.1 is
// answered with 505, anything else is not a request line at all.
ParseResult parse_version(std::string_view v, Head& out) {
    if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || !is_digit(v[5]) || v[6] != '.' || !is_digit(v[7]))
        return fail(400, "bad version");
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return fail(505, "unsupported version");
    out.minor = uint8_t(v[7] - '0');
    return kOk;
}

// Section 3: method SP request-target SP HTTP-version, single spaces only.
ParseResult parse_request_line(std::string_view line, Head& out) {
    size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos)
        return fail(400, "bad request line");
    out.method_text = line.substr(0, sp1);
    if (!is_token(out.method_text))
        return fail(400, "bad method");
    out.method = method_from(out.method_text);
    std::string_view rest = line.substr(sp1 + 1);
    size_t sp2 = rest.find(' ');
    if (sp2 == std::string_view::npos)
        return fail(400, "bad request line");
    out.target = rest.substr(0, sp2);
    if (out.target.empty() || !target_chars_ok(out.target))
        return fail(400, "bad target");
    if (auto r = parse_version(rest.substr(sp2 + 1), out); r.status == Parse::Error)
        return r;
    return parse_target(out.target, out);
}

// Section 5: field-name ":" OWS field-value OWS.
ParseResult parse_field_line(std::string_view line, Header& out) {
    if (is_ows(line.front()))
        return fail(400, "obs-fold"); // section 5.2: a server may refuse folding; we do
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
        return fail(400, "field line without colon");
    std::string_view name = line.substr(0, colon);
    if (!name.empty() && is_ows(name.back()))
        return fail(400, "whitespace before colon"); // section 5.1: MUST be rejected
    if (!is_token(name))
        return fail(400, "bad header name");
    std::string_view value = trim_ows(line.substr(colon + 1));
    for (char c : value)
        if (!is_field_char(c))
            return fail(400, "bad header value"); // NUL, bare CR and other controls
    out = { name, value };
    return kOk;
}

ParseResult content_length(std::string_view value, Head& out) {
    // RFC 9110 section 8.6: a list of identical values ("5, 5", or repeated fields) is one
    // length; differing ones are how requests are smuggled past a proxy.
    ListReader list(value);
    bool any = false;
    while (auto element = list.next()) {
        uint64_t n = 0;
        if (!parse_decimal(*element, n))
            return fail(400, "bad Content-Length");
        if (out.has_content_length && n != out.content_length)
            return fail(400, "conflicting Content-Length");
        out.content_length = n;
        out.has_content_length = any = true;
    }
    return any ? kOk : fail(400, "bad Content-Length");
}

// What the fields mean for this server once the head is complete: Host, body framing,
// persistence.
ParseResult check_fields(Head& out, const Limits& limits) {
    size_t hosts = 0;
    std::string_view host;
    bool transfer_encoding = false, close = false, keep_alive = false;
    for (size_t i = 0; i < out.header_count; ++i) {
        const Header& h = out.headers[i];
        if (equals_ci(h.name, "host")) {
            ++hosts;
            host = h.value;
        } else if (equals_ci(h.name, "content-length")) {
            if (auto r = content_length(h.value, out); r.status == Parse::Error)
                return r;
        } else if (equals_ci(h.name, "transfer-encoding")) {
            transfer_encoding = true;
        } else if (equals_ci(h.name, "connection")) {
            close = close || list_contains(h.value, "close");
            keep_alive = keep_alive || list_contains(h.value, "keep-alive");
        }
    }
    // Section 3.2: 400 for a 1.1 request without Host, for several Host lines, for a bad one.
    if (hosts > 1)
        return fail(400, "duplicate Host");
    if (hosts == 0 && out.minor == 1)
        return fail(400, "missing Host");
    if (hosts == 1 && !parse_host(host))
        return fail(400, "bad Host");
    if (out.authority.empty())
        out.authority = host;
    // Section 6.3: with both, the framing is ambiguous between hops (request smuggling).
    if (transfer_encoding && out.has_content_length)
        return fail(400, "Transfer-Encoding with Content-Length");
    // Chunked request bodies are not supported: MCP clients send a Content-Length with each
    // POST, and refusing here keeps one framing rule. Section 6.1 allows 501 for this.
    if (transfer_encoding)
        return fail(501, "Transfer-Encoding not supported");
    if (out.content_length > limits.max_body)
        return fail(413, "body too large");
    out.keep_alive = !close && (out.minor == 1 || keep_alive); // section 9.3
    return kOk;
}

// Only the request line has a length limit of its own; field lines share the head's.
ParseResult scan_failure(Scan scan) {
    switch (scan) {
    case Scan::TooLong: return fail(414, "request line too long");
    case Scan::HeadTooLarge: return fail(431, "head too large");
    default: return { Parse::NeedMore };
    }
}

} // namespace

std::optional<std::string_view> Head::header(std::string_view name) const {
    for (size_t i = 0; i < header_count; ++i)
        if (equals_ci(headers[i].name, name))
            return headers[i].value;
    return std::nullopt;
}

ParseResult parse_head(std::string_view data, const Limits& limits, Head& out) {
    out = Head {};
    const size_t max_headers = limits.max_headers < kMaxHeaders ? limits.max_headers : kMaxHeaders;
    const size_t head_limit = limits.max_header_bytes;
    size_t pos = 0;
    Line line;
    // Section 2.2: empty lines before the request line are skipped (a client may send a CRLF
    // after a POST body). They count towards the head, so this loop ends within head_limit.
    do {
        Scan s = scan_line(data, pos, limits.max_request_line, head_limit, line);
        if (s != Scan::Found)
            return scan_failure(s);
        pos = line.next;
    } while (line.content.empty());
    if (auto r = parse_request_line(line.content, out); r.status == Parse::Error)
        return r;

    // Field lines up to the empty line; each consumes at least one byte below head_limit.
    for (;;) {
        // One header too many is known from the first byte of its line; refusing it there
        // rather than at its end is what the "as soon as a limit is passed" promise needs.
        bool full = out.header_count == max_headers;
        if (full && pos < data.size() && pos < head_limit && data[pos] != '\r' && data[pos] != '\n')
            return fail(431, "too many headers");
        Scan s = scan_line(data, pos, SIZE_MAX, head_limit, line);
        if (s != Scan::Found)
            return scan_failure(s);
        pos = line.next;
        if (line.content.empty())
            break;
        if (full)
            return fail(431, "too many headers"); // a line that starts with a bare CR
        if (auto r = parse_field_line(line.content, out.headers[out.header_count]); r.status == Parse::Error)
            return r;
        ++out.header_count;
    }
    out.head_bytes = pos;
    return check_fields(out, limits);
}

} // namespace http

#pragma once
// An HTTP/1.1 request-head reader (RFC 9112) for a server that is fed bytes as they arrive.
// Zero copy: every view in a Head points into the caller's receive buffer. No allocation,
// no recursion; each call rescans from the start, which is cheap next to the network and
// keeps the reader stateless (the caller keeps only its buffer).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <http/limits.h>

namespace http {

enum class Method : uint8_t { Get, Head, Post, Put, Delete, Options, Patch, Other };

struct Header {
    std::string_view name;
    std::string_view value; // surrounding OWS trimmed
};

struct Head {
    Method method = Method::Other;
    std::string_view method_text; // as sent (methods are case-sensitive)
    std::string_view target;      // as sent
    std::string_view path;        // target without "?query"; "/" for "http://host" and "*" for OPTIONS *
    std::string_view query;       // after the '?', empty if none
    // Whom the request is for: the Host field, or for an absolute-form target its host[:port]
    // (RFC 9112 section 3.2.2: the target's authority then wins over Host). Empty only for a
    // HTTP/1.0 request without Host. This is what a DNS-rebinding check must look at.
    std::string_view authority;
    uint8_t minor = 1; // HTTP/1.0 or HTTP/1.1 only
    Header headers[kMaxHeaders];
    size_t header_count = 0;
    size_t head_bytes = 0; // where the body starts: request line + fields + the empty line
    uint64_t content_length = 0;
    bool has_content_length = false;
    bool keep_alive = true; // RFC 9112 section 9.3: 1.1 unless "close", 1.0 only with "keep-alive"

    // Case-insensitive; the first field line with that name.
    std::optional<std::string_view> header(std::string_view name) const;
};

enum class Parse : uint8_t { NeedMore, Complete, Error };

struct ParseResult {
    Parse status;
    uint16_t http_status = 0; // with Error: 400, 413, 414, 431, 501 or 505
    const char* reason = "";  // with Error: a short static string for logs
};

// Parses the request head at the start of `data`: all bytes received so far on the connection
// for this request (call again with more). NeedMore only while no limit is exceeded, so an
// oversized or endless head is refused as soon as it passes a limit. The verdict for any data
// is the verdict for every longer data with the same start (feeding in pieces changes nothing).
// The body, if any, is data[head_bytes, head_bytes + content_length).
ParseResult parse_head(std::string_view data, const Limits& limits, Head& out);

} // namespace http

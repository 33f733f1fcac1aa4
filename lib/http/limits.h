#pragma once
// Every bound of the HTTP/1.1 request reader in one place (style: "All limits in one header").
#include <cstddef>

namespace http {

// Head::headers is a fixed array of this many entries; Limits::max_headers above it counts as it.
constexpr size_t kMaxHeaders = 64;

struct Limits {
    size_t max_request_line = 8192;   // bytes of the request line, line terminator excluded (else 414)
    size_t max_header_bytes = 16384;  // the whole head: request line, fields and the empty line (else 431)
    size_t max_headers = kMaxHeaders; // field lines (else 431)
    size_t max_body = 1u << 20;       // Content-Length (else 413)
};

} // namespace http

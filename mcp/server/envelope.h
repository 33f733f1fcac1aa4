#pragma once
// The canonical error envelope (docs/security.md):
//   {"ok":false,"error":{"code":..,"message":..,"details":{..}|null},"request_id":..,"timestamp":..}
// Where it sits, the same on every transport:
//  - authentication failures: JSON-RPC error -32001, envelope in error.data
//  - rate / concurrency limits: JSON-RPC error -32003, envelope in error.data
//  - unknown or unlisted tool: JSON-RPC error -32602, envelope in error.data
//  - unknown resource: -32002 (2025 revisions) or -32602 (2026-07-28), envelope in error.data
//  - protocol version not served (2026-07-28): -32022, error.data is the envelope plus the
//    spec's `supported` and `requested` members
//  - malformed messages: JSON-RPC -32700 / -32600, envelope in error.data
//  - failures of an admitted call (validation, time/output limits, not found, step-up, storage
//    full, unavailable, internal):
//    a tools/call result with isError true, the envelope in its text content and in
//    _meta["io.basalt/error"] (kErrorMetaKey); never as structuredContent, which is kept for
//    output that conforms to the tool's outputSchema.
#include <string_view>

#include <json/writer.h>
#include <mcp/policy/error_code.h>

namespace mcp {

// Where a failed tool result carries the envelope for code to read (a _meta key: reverse-DNS
// prefix, ours).
inline constexpr const char* kErrorMetaKey = "io.basalt/error";

struct Detail {
    std::string_view key;
    std::string_view value;
    bool number = false; // value is a JSON number's text (written as is), not a string
};

void write_envelope(json::Writer& w, ErrorCode code, std::string_view message, std::string_view request_id,
                    std::string_view timestamp, std::initializer_list<Detail> details = {});
// The envelope's members into an object the caller has opened (to add members a protocol
// error's data needs beside them).
void write_envelope_members(json::Writer& w, ErrorCode code, std::string_view message, std::string_view request_id,
                            std::string_view timestamp, std::initializer_list<Detail> details = {});

} // namespace mcp

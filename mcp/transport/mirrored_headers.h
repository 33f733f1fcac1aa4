#pragma once
// 2026-07-28 Streamable HTTP, "Request Metadata" (SEP-2243): a request mirrors parts of its body
// into headers so that intermediaries can route on them without parsing the body. A server that
// reads the body must refuse a request whose headers disagree with it, or the proxy in front and
// the server behind would act on two different requests:
//   MCP-Protocol-Version  = params._meta["io.modelcontextprotocol/protocolVersion"]
//   Mcp-Method            = method
//   Mcp-Name              = params.name (tools/call, prompts/get) or params.uri (resources/read)
//   Mcp-Param-{Name}      = the argument whose schema property says "x-mcp-header": "{Name}"
//                           (tools/call; strings, integers and booleans; any depth)
// Values are plain visible ASCII, or "=?base64?<UTF-8 in base64>?=" for anything else.
// Portable (no I/O): the HTTP transport asks before dispatch, host tests directly.
#include <optional>
#include <span>
#include <string_view>

#include <http/request.h>
#include <json/json.h>
#include <mcp/server/server.h>

namespace mcp {

// A mirrored header value as the body would hold it: plain text as it is (visible ASCII, space,
// tab), or the bytes of a "=?base64?...?=" value, which must be UTF-8. nullopt: characters a
// plain value may not hold, base64 that does not decode, or more than fits in buf.
std::optional<std::string_view> decode_header_value(std::string_view value, std::span<char> buf);

// True when the headers of a 2026-07-28 request agree with its body (`request`: the JSON-RPC
// object); false with the reason in `why` (NUL-terminated) otherwise. `tool`: the tool a
// tools/call names, if it is one this server serves (its x-mcp-header parameters are checked);
// `schema_nodes`: room to parse its input schema.
bool mirrored_headers_agree(const http::Head& head, const json::Value& request, const Tool* tool,
                            std::span<json::Node> schema_nodes, std::span<char> why);

} // namespace mcp

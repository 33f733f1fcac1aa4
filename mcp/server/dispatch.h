#pragma once
// Inside the dispatcher (not an interface): the request being answered and the reply helpers,
// shared by the files of the dispatcher (router.cpp, pipeline.cpp, the methods' files).
#include <initializer_list>
#include <optional>
#include <string_view>

#include <ktl/utf8.h>

#include "envelope.h"
#include "server.h"
#include "request_state.h"

namespace mcp {

constexpr int kParseError = -32700, kInvalidRequest = -32600, kMethodNotFound = -32601, kInvalidParams = -32602;
// Server-defined codes: -32002 is "resource not found" in the MCP spec ("Resources", error
// handling), so limits use -32003.
constexpr int kAuthError = -32001, kResourceNotFound = -32002, kLimitError = -32003;
// Cache hints (2026-07-28 "Caching"). The tool, prompt and resource lists are fixed at boot;
// resource contents are live snapshots, and scope-gated, so nothing may be reused across callers.
constexpr uint32_t kStaticTtlMs = 300'000, kLiveTtlMs = 0;

struct Server::Request {
    json::Writer& w;
    json::Value id;
    json::Value params;
    char request_id[80];
    char timestamp[32];
    const Principal* principal = nullptr; // after authentication
    AuditKind kind = AuditKind::Tool;
    std::string_view name;
    uint64_t args_hash = 0;
    uint64_t start_ns = 0;
    bool deferred = false; // handed to start_call: the answer comes later
    bool modern = false;   // 2026-07-28 request (per-request _meta)
    int8_t log_level = -1; // its logLevel opt-in
    uint32_t origin = 0;   // the session's (PendingCall::origin / reply_to)
    uint32_t reply_to = 0;
    const char* transport = ""; // the session's, else the server's (audit, provenance)
    uint64_t provenance = 0;    // its provenance node, once admitted
    // An anonymous request's node is made once the limiter admits it (note_provenance).
    const Session* node_session = nullptr;
    std::string_view node_method = {};
    const char* action = ""; // for the audit trail (AuditEvent::action, target, reason)
    const char* reason = "";
    char target[64] = "";
    // A tools/call's stage timing (CallStages): when the message arrived, and the end of the
    // last stage timed.
    bool timed = false;
    uint64_t received_ns = 0;
    uint64_t lap_ns = 0;
};

// Cut at a character boundary: what is copied may be shown as JSON text again.
template <size_t N>
inline uint8_t copy_text(char (&dst)[N], std::string_view src) {
    static_assert(N <= 256);
    return static_cast<uint8_t>(ktl::utf8_copy(dst, N, src));
}

// A level named in a request (logging/setLevel, or 2026-07-28's per-request logLevel).
std::optional<LogLevel> parse_log_level(const json::Value& name);

// {"jsonrpc":"2.0","id":<id or null>  (the caller goes on with "result" or "error")
void begin_reply(json::Writer& w, const json::Value& id);
// {"jsonrpc":"2.0","id":..,"error":{"code":..,"message":..,"data":<envelope>}}
void error_reply(json::Writer& w, const json::Value& id, int rpc_code, const char* rpc_message, ErrorCode code,
                 std::string_view detail_message, std::string_view request_id, std::string_view timestamp,
                 std::initializer_list<Detail> details = {});
// "nextCursor": the offset of the next page's first item.
void write_next_cursor(json::Writer& w, uint32_t next);

// One page of a list result (tools/list, prompts/list): the array `key` of the `listed` items
// from `offset` on, at most `page` of them, each written by `write`, then "nextCursor" when more
// follow.
template <typename Items, typename Listed, typename Write>
void write_page(json::Writer& w, const char* key, const Items& items, uint32_t offset, uint32_t page, Listed listed,
                Write write) {
    w.key(key).begin_array();
    uint32_t index = 0, written = 0;
    bool more = false;
    for (const auto& item : items) {
        if (!listed(item) || index++ < offset)
            continue;
        if (written == page) {
            more = true;
            break;
        }
        ++written;
        write(item);
    }
    w.end_array();
    if (more)
        write_next_cursor(w, offset + written);
}

// {"resultType":"input_required","inputRequests":{..},"requestState":".."} (the state is always
// there: it binds the next round to this one). False when the answers used so far do not fit in
// a state (over its payload limit).
template <typename Begin>
inline bool write_input_required(json::Writer& w, Begin&& begin, std::span<const uint8_t> key, const StateBinding& b,
                                 uint64_t now_ns, std::string_view requests, std::string_view used,
                                 std::span<char> state) {
    size_t n = seal_state(key, b, now_ns, used, state);
    if (n == 0)
        return false;
    begin(w);
    w.key("result").begin_object().key("resultType").string("input_required");
    w.key("inputRequests").begin_object().raw_members(requests).end_object();
    w.key("requestState").string({ state.data(), n });
    w.end_object().end_object();
    return true;
}

} // namespace mcp

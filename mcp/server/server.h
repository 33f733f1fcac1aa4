#pragma once
// The MCP dispatcher (portable; one instance per transport line). It takes one JSON-RPC
// message and produces at most one reply. Both revisions of the 2025 line are negotiated:
// 2025-11-25 (preferred), 2025-06-18 and 2025-03-26 (MCP spec "Lifecycle": the server answers
// with the client's version when it supports it, otherwise with its latest).
//
// This first slice serves: initialize, notifications/initialized, ping, tools/list (cursor
// pagination), tools/call. Policy applied before a tool runs: the session's principal must be
// authenticated, the tool must be on the allowlist (deny by default), the principal's scopes must
// cover the tool's, and the per-principal rate/concurrency limiter must admit the call.
// Failures carry the canonical error envelope (see envelope.h for where it sits).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <json/json.h>
#include <json/writer.h>
#include <mcp/policy/call_limiter.h>
#include <mcp/policy/error_code.h>
#include <mcp/policy/key_store.h>

namespace mcp {

struct ToolError {
    ErrorCode code = ErrorCode::InternalError;
    const char* message = "";
};

struct Tool {
    const char* name;
    const char* title;
    const char* description;
    const char* input_schema;  // JSON text
    const char* output_schema; // JSON text (structuredContent conforms to it)
    uint32_t scopes;           // all of them are required
    // Writes the structured result as one JSON object into w; false + err on failure.
    bool (*run)(const json::Value& arguments, json::Writer& w, ToolError& err);
};

struct ServerConfig {
    const char* name = "basalt";
    const char* version = "0";
    const char* source_commit = "unknown";
    const char* instructions = nullptr;
    std::span<const Tool> tools;
    std::span<const std::string_view> allowlist; // tool names that may run
    uint32_t page_size = 4;                       // tools per tools/list page
    // RFC 3339 UTC time for envelopes (the kernel reads its RTC-anchored clock).
    void (*now_rfc3339)(char* out, size_t cap) = nullptr;
    uint64_t (*now_ns)() = nullptr;
};

struct Session {
    const Principal* principal = nullptr; // who this line acts as (nullptr: anonymous)
    bool initialized = false;
    char protocol_version[16] = "";
};

class Server {
public:
    Server(const ServerConfig& config, CallLimiter& limiter) : m_config(config), m_limiter(limiter) {}

    // Handles one message. Returns the reply length written into out (0: nothing to send).
    size_t handle(std::string_view message, Session& session, std::span<char> out);
    // A line too long for the transport: a JSON-RPC error without an id.
    size_t oversized(uint64_t discarded, std::span<char> out);

    static constexpr const char* kLatestVersion = "2025-11-25";

private:
    struct Request;
    void initialize(Request& r, Session& s);
    void tools_list(Request& r);
    void tools_call(Request& r, Session& s);
    bool allowed(std::string_view tool) const;
    const Tool* find_tool(std::string_view name) const;

    const ServerConfig& m_config;
    CallLimiter& m_limiter;
    json::Node m_nodes[4096];
};

} // namespace mcp

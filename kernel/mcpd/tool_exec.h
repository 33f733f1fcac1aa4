#pragma once
// No direct execution (contracts, steps 8-9): every admitted tools/call runs in a task of its
// own. The bridge (the MCP task) creates the task with an empty capability table and has the
// kernel issue it one single-use execution token, bound to this call (tool name, argument hash,
// call number) and expiring with the call's wall-time limit. The tool task redeems the token for
// the one capability the tool needs (introspection, read) and runs; without a valid token it
// refuses to run (fail-closed). Calls run concurrently with the line: the bridge keeps reading
// requests, forwards progress, passes on cancellation and answers each call when it ends.
#include <cstdint>

#include <json/json.h>
#include <json/writer.h>
#include <mcp/server/server.h>

namespace mcpd {

// The bridge's capabilities for starting tool tasks.
struct ExecCaps {
    uint32_t factory = ~0u;       // task_create
    uint32_t introspection = ~0u; // the object tokens are issued for (needs Grant)
};
// wake: returns the bridge from its wait when a call ends or reports progress.
// Limits of 0 keep the defaults; others may only tighten them.
void set_exec_caps(const ExecCaps& caps, uint64_t wall_limit_ns, size_t output_limit, void (*wake)());

struct Job;

// What a tool body sees: the capability slot its token granted, its deadline, cancellation,
// and a way to report progress.
struct ToolContext {
    uint32_t introspection;
    Job* job;
    bool expired() const;   // past the wall-time limit
    bool cancelled() const; // the client sent notifications/cancelled
    bool should_stop() const { return expired() || cancelled(); }
    void progress(uint64_t done, uint64_t total, const char* message) const;
};

using ToolBody = bool (*)(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);

// ServerConfig::start_call / cancel_call for the kernel's tools.
bool start_call(const mcp::Tool& tool, const json::Value& arguments, const mcp::PendingCall& call, mcp::ToolError& err);
void cancel_call(std::string_view raw_id, bool id_is_string);
// Called by the bridge whenever it wakes: answers finished calls, times out late ones and
// forwards progress. send(len) writes `out[0..len)` to the line.
void poll_calls(mcp::Server& server, std::span<char> out, void (*send)(size_t len));
bool calls_in_flight();
// The lowest log level a running call opted into (2026-07-28 per-request logging), -1: none.
int calls_log_floor();

// The body registered for a tool name (kernel_tools.cpp).
ToolBody body_of(const char* tool_name);

constexpr uint64_t kDefaultWallLimitNs = 10'000'000'000ull;
constexpr size_t kMaxCalls = 10; // tool tasks at once: the contracts' default in-flight cap per principal

} // namespace mcpd

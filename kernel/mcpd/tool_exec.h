#pragma once
// No direct execution (contracts, steps 8-9): every admitted tools/call runs in a task of its
// own. The bridge (the MCP task) creates the task with an empty capability table and has the
// kernel issue it one single-use execution token, bound to this call (tool name, argument hash,
// call number) and expiring with the call's wall-time limit. The tool task redeems the token for
// the one capability the tool needs (introspection, read) and runs; without a valid token it
// refuses to run (fail-closed). The bridge waits for it up to the wall-time limit.
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
void set_exec_caps(const ExecCaps& caps);

// What a tool body sees: the capability slot its token granted, and its deadline.
struct ToolContext {
    uint32_t introspection;
    uint64_t deadline_ns;
    bool expired() const;
};

using ToolBody = bool (*)(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);

// Runs body in a fresh tool task; writes its structured result into w.
bool execute(const char* tool_name, ToolBody body, const json::Value& args, json::Writer& w, mcp::ToolError& err);

constexpr uint64_t kToolWallLimitNs = 10'000'000'000ull;

} // namespace mcpd

// Must not compile (tests/host/CMakeLists.txt, test tools.compile_fail.*): a tool whose token may
// drop a collection, declared read-only, as a destructive tool added without its sink class would be.
#include "kernel/mcpd/tools/tool_def.h"

namespace {

bool body(const json::Value&, json::Writer&, mcp::ToolError&, const mcpd::ToolContext&) { return true; }

constexpr mcp::Tool kTool = { "drop_it", "Drop",  "Destroys a collection.",    "{}", nullptr,
                              0,         nullptr, mcp::ToolResult::Structured, 0,    "drop",
                              "name" };

} // namespace

#ifdef BASALT_WITHOUT_TARGET
// A sink class without the argument naming its collection.
constexpr mcp::Tool kNoTarget = { "delete_it", "Delete", "Deletes ids.", "{}", nullptr, 0, nullptr };
MCPD_TOOL(delete_it) { kNoTarget, body, mcpd::Grant::Collection, uint32_t(cap::Rights::Write),
                       mcpd::Effect::deletes_ids() };
#else
MCPD_TOOL(drop_it) { kTool, body, mcpd::Grant::Store, uint32_t(cap::Rights::Drop), mcpd::Effect::read_only() };
#endif

// kernel_tasks: every task with its state, priority, CPU time and heap use.
// Reads through the introspection object its token granted (read), nothing else.
#include "../schemas.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kTasksOut =
    R"({"type":"object","properties":{"tasks":{"type":"array","items":{"type":"object",)"
    R"("properties":{"id":{"type":"integer"},"name":{"type":"string"},"state":{"type":"string"},)"
    R"("priority":{"type":"integer"},"cpu_ms":{"type":"integer"},"heap_bytes":{"type":"integer"}}}}},)"
    R"("required":["tasks"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    abi::TaskInfo tasks[64];
    int64_t n = sys::task_list(ctx.cap, tasks, 64);
    if (n < 0) {
        err = { mcp::ErrorCode::InternalError, "task list unavailable" };
        return false;
    }
    static const char* const states[] = { "free", "ready", "running", "blocked", "sleeping", "dead" };
    w.begin_object().key("tasks").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        const auto& t = tasks[i];
        w.begin_object();
        w.key("id").number(t.id).key("name").string(t.name);
        w.key("state").string(t.state < 6 ? states[t.state] : "?");
        w.key("priority").number(uint32_t(t.priority));
        w.key("cpu_ms").number(t.cpu_ns / 1000000).key("heap_bytes").number(t.heap_bytes);
        w.end_object();
    }
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "kernel_tasks",   "Kernel tasks", "Every task with its state, priority, CPU time and heap use.", kNoArgs, kTasksOut,
    mcp::kKernelRead, nullptr
};

} // namespace

MCPD_TOOL(kernel_tasks) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

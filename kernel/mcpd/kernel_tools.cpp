// Read-only kernel tools. They run in the MCP task through its introspection capability.
// FIXME: tools should run in a tool task holding only what a single-use execution token grants
// (contracts "No direct execution"); this first slice calls them from the MCP task.
#include "kernel_tools.h"

#include "../board/board.h"
#include "../clock.h"
#include "../platform.h"
#include "../syscall/handlers.h"
#include "../syscall/sys.h"
#include "../version.h"
#include "../arch/aarch64/cpu.h"

#include <mcp/policy/roles.h>

namespace mcpd {

uint32_t g_introspection_slot = ~0u; // set by the MCP task before serving

namespace {

const char* kNoArgs = R"({"type":"object","properties":{},"additionalProperties":false})";

const char* kInfoOut = R"({"type":"object","properties":{"name":{"type":"string"},"version":{"type":"string"},)"
                       R"("source_commit":{"type":"string"},"board":{"type":"string"},"model":{"type":"string"},)"
                       R"("cpu":{"type":"string"},"uptime_ms":{"type":"integer"},"time":{"type":"string"},)"
                       R"("memory":{"type":"object"},"tasks":{"type":"integer"}},)"
                       R"("required":["name","version","source_commit","uptime_ms"]})";

bool kernel_info(const json::Value&, json::Writer& w, mcp::ToolError& err) {
    sysinfo::MemInfo mem {};
    if (sys::call(sys::Number::mem_stats, g_introspection_slot, reinterpret_cast<uint64_t>(&mem)) < 0) {
        err = { mcp::ErrorCode::InternalError, "memory statistics unavailable" };
        return false;
    }
    sysinfo::TaskInfo tasks[64];
    int64_t ntasks = sys::call(sys::Number::task_list, g_introspection_slot, reinterpret_cast<uint64_t>(tasks), 64);
    char now[32];
    clock::rfc3339_now(now, sizeof now);
    w.begin_object();
    w.key("name").string("Basalt");
    w.key("version").string(kVersion);
    w.key("source_commit").string(kSourceCommit);
    w.key("board").string(board::kName);
    w.key("model").string(platform::info().model);
    w.key("cpu").string(arch::cpu_part_name(arch::midr()));
    w.key("uptime_ms").number(static_cast<uint64_t>(clock::monotonic_ns() / 1000000));
    w.key("time").string(now);
    w.key("memory").begin_object();
    w.key("total_pages").number(mem.total_pages).key("free_pages").number(mem.free_pages);
    w.key("heap_live_allocations").number(mem.heap_live_allocations);
    w.end_object();
    w.key("tasks").number(static_cast<int64_t>(ntasks < 0 ? 0 : ntasks));
    w.end_object();
    return true;
}

const char* kTasksOut = R"({"type":"object","properties":{"tasks":{"type":"array","items":{"type":"object",)"
                        R"("properties":{"id":{"type":"integer"},"name":{"type":"string"},"state":{"type":"string"},)"
                        R"("priority":{"type":"integer"},"cpu_ms":{"type":"integer"},"heap_bytes":{"type":"integer"}}}}},)"
                        R"("required":["tasks"]})";

bool kernel_tasks(const json::Value&, json::Writer& w, mcp::ToolError& err) {
    sysinfo::TaskInfo tasks[64];
    int64_t n = sys::call(sys::Number::task_list, g_introspection_slot, reinterpret_cast<uint64_t>(tasks), 64);
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

const mcp::Tool kTools[] = {
    { "kernel_info", "Kernel information", "Version, source commit, board, CPU, uptime, UTC time and memory of the appliance.",
      kNoArgs, kInfoOut, mcp::kKernelRead, kernel_info },
    { "kernel_tasks", "Kernel tasks", "Every task with its state, priority, CPU time and heap use.", kNoArgs, kTasksOut,
      mcp::kKernelRead, kernel_tasks },
};

} // namespace

std::span<const mcp::Tool> kernel_tools() { return kTools; }

} // namespace mcpd

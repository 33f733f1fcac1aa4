// kernel_info: version, commit, board, CPU, uptime, time and memory of the appliance.
// Reads through the introspection object its token granted (read), nothing else.
#include "../schemas.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>
#include "../../firmware_json.h"
#include "../../../arch/aarch64/cpu.h"
#include "../../../board/board.h"
#include "../../../clock.h"
#include "../../../platform.h"
#include "../../../syscall/handlers.h"
#include "../../../version.h"

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kInfoOut =
    R"({"type":"object","properties":{"name":{"type":"string"},"version":{"type":"string"},)"
    R"("source_commit":{"type":"string"},"board":{"type":"string"},"model":{"type":"string"},)"
    R"("cpu":{"type":"string"},"uptime_ms":{"type":"integer"},"time":{"type":"string"},)"
    R"("memory":{"type":"object"},"tasks":{"type":"integer"},"firmware":{"type":"object"}},)"
    R"("required":["name","version","source_commit","uptime_ms"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    sysinfo::MemInfo mem {};
    if (sys::mem_stats(ctx.cap, &mem) < 0) {
        err = { mcp::ErrorCode::InternalError, "memory statistics unavailable" };
        return false;
    }
    sysinfo::TaskInfo tasks[64];
    int64_t ntasks = sys::task_list(ctx.cap, tasks, 64);
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
    write_firmware(w); // the Pi: board, revision, serial, MAC, clocks as its firmware reports them
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = { "kernel_info",
                              "Kernel information",
                              "Version, source commit, board, CPU, uptime, UTC time and memory of the appliance.",
                              kNoArgs,
                              kInfoOut,
                              mcp::kKernelRead,
                              nullptr };

} // namespace

MCPD_TOOL(kernel_info) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

// kernel_info: version, commit, board, CPU, uptime, time and memory of the appliance.
// Reads through the introspection object its token granted (read), nothing else.
#include "../schemas.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>
#include <abi/version.h>
#include "../../firmware_json.h"

#include <ktl/civil_time.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kInfoOut =
    R"({"type":"object","properties":{"name":{"type":"string"},"version":{"type":"string"},)"
    R"("source_commit":{"type":"string"},"board":{"type":"string"},"model":{"type":"string"},)"
    R"("cpu":{"type":"string"},"cpus":{"type":"object","description":"cores online, and those the device tree lists"},)"
    R"("uptime_ms":{"type":"integer"},"time":{"type":"string"},)"
    R"("memory":{"type":"object"},"tasks":{"type":"integer"},"firmware":{"type":"object"}},)"
    R"("required":["name","version","source_commit","uptime_ms"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    abi::MemInfo mem {};
    if (sys::mem_stats(ctx.cap, &mem) < 0) {
        err = { mcp::ErrorCode::InternalError, "memory statistics unavailable" };
        return false;
    }
    abi::TaskInfo tasks[64];
    int64_t ntasks = sys::task_list(ctx.cap, tasks, 64);
    abi::SystemInfo system {};
    if (sys::system_info(ctx.cap, &system) < 0) {
        err = { mcp::ErrorCode::InternalError, "system information unavailable" };
        return false;
    }
    char now[32] = "unknown"; // until wall time is set (a board without an RTC, not told yet)
    if (system.wall_clock_known)
        ktl::format_rfc3339(system.unix_seconds, now, sizeof now);
    w.begin_object();
    w.key("name").string("Basalt");
    w.key("version").string(kVersion);
    w.key("source_commit").string(kSourceCommit);
    w.key("board").string(system.board);
    w.key("model").string(system.model);
    w.key("cpu").string(system.cpu);
    w.key("cpus").begin_object().key("online").number(static_cast<uint64_t>(system.cpus_online));
    w.key("listed").number(static_cast<uint64_t>(system.cpus_listed)).end_object();
    w.key("uptime_ms").number(system.mono_ns / 1000000);
    w.key("time").string(now);
    w.key("memory").begin_object();
    w.key("total_pages").number(mem.total_pages).key("free_pages").number(mem.free_pages);
    w.key("heap_live_allocations").number(mem.heap_live_allocations);
    w.end_object();
    w.key("tasks").number(static_cast<int64_t>(ntasks < 0 ? 0 : ntasks));
    write_firmware(w, system.firmware); // the Pi: board, revision, serial, MAC, clocks as its firmware reports them
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

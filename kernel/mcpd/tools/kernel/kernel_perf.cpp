// kernel_perf: times system call round trips now and reports scheduler figures.
// Reads through the introspection object its token granted (read), nothing else.
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <drivers/generic_timer.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kPerfIn =
    R"({"type":"object","properties":{)"
    R"("iterations":{"type":"integer","minimum":1,"maximum":100000,"description":"system calls to time, default 1000"}},)"
    R"("additionalProperties":false})";
constexpr const char* kPerfOut =
    R"({"type":"object","properties":{"syscall_ns":{"type":"object"},"counter_hz":{"type":"integer"},)"
    R"("uptime_ms":{"type":"integer"},"idle_share":{"type":"number"},"context_switches":{"type":"integer"}},)"
    R"("required":["syscall_ns"]})";

// Times the null system call (clock) from this task: the cost of crossing into the kernel and
// back, measured now, on this machine.
bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    uint64_t iterations = args.find("iterations").as_uint64().value_or(1000);
    constexpr size_t kSamples = 1024;
    // This call's own (tool tasks run side by side), on its stack: 4 KiB of counter deltas (one
    // system call takes far fewer than 2^32 counter ticks).
    uint32_t samples[kSamples];
    size_t kept = 0;
    uint64_t total = 0, best = ~0ull;
    for (uint64_t i = 0; i < iterations; ++i) {
        if ((i & 1023) == 1023 && ctx.expired()) {
            err = { mcp::ErrorCode::LimitTimeExceeded, "stopped at the wall-time limit" };
            return false;
        }
        uint64_t t0 = GenericTimer::counter();
        sys::clock();
        uint64_t d = GenericTimer::counter() - t0;
        total += d;
        best = d < best ? d : best;
        if (kept < kSamples)
            samples[kept++] = d > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(d);
    }
    // Insertion sort of at most 1,024 samples: bounded and allocation-free.
    for (size_t i = 1; i < kept; ++i)
        for (size_t j = i; j > 0 && samples[j - 1] > samples[j]; --j) {
            uint32_t t = samples[j];
            samples[j] = samples[j - 1];
            samples[j - 1] = t;
        }
    uint64_t hz = GenericTimer::frequency();
    auto ns = [hz](uint64_t ticks) -> uint64_t { return hz ? ticks * uint64_t(1000000000) / hz : 0; };
    abi::TaskInfo tasks[64];
    int64_t n = sys::task_list(ctx.cap, tasks, 64);
    if (n < 0) {
        err = { mcp::ErrorCode::InternalError, "task list unavailable" };
        return false;
    }
    uint64_t switches = 0, idle_ns = 0;
    for (int64_t i = 0; i < n; ++i) {
        switches += tasks[i].switches;
        if (tasks[i].name[0] == 'i' && tasks[i].name[1] == 'd' && tasks[i].name[2] == 'l' && tasks[i].name[3] == 'e')
            idle_ns += tasks[i].cpu_ns;
    }
    uint64_t up = sys::clock_ns();
    w.begin_object();
    w.key("syscall_ns").begin_object().key("iterations").number(iterations).key("min").number(ns(best));
    w.key("mean").number(ns(total / (iterations ? iterations : 1)));
    w.key("p50").number(ns(samples[kept / 2])).key("p99").number(ns(samples[(kept * 99) / 100]));
    w.end_object();
    w.key("counter_hz").number(hz).key("uptime_ms").number(up / 1000000);
    w.key("idle_share").number(up ? static_cast<double>(idle_ns) / static_cast<double>(up) : 0.0);
    w.key("context_switches").number(switches);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = { "kernel_perf",
                              "Kernel performance probe",
                              "Times system call round trips now and reports scheduler figures.",
                              kPerfIn,
                              kPerfOut,
                              mcp::kKernelRead,
                              nullptr };

} // namespace

MCPD_TOOL(kernel_perf) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

// kernel_diagnose: timer and system-call checks for a number of steps, with progress; cancellable.
// Reads through the introspection object its token granted (read), nothing else.
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>
#include "../../../clock.h"
#include "../../../log.h"

#include <mcp/policy/roles.h>
#include <ktl/decimal.h>

namespace mcpd::tools {
namespace {

constexpr const char* kDiagIn =
    R"({"type":"object","properties":{)"
    R"("steps":{"type":"integer","minimum":1,"maximum":100,"description":"steps to run, default 10"},)"
    R"("step_ms":{"type":"integer","minimum":10,"maximum":1000,"description":"length of one step, default 100"}},)"
    R"("additionalProperties":false})";
constexpr const char* kDiagOut =
    R"({"type":"object","properties":{"steps_done":{"type":"integer"},"syscalls":{"type":"integer"},)"
    R"("syscall_mean_ns":{"type":"integer"},"sleep_overshoot_max_us":{"type":"integer"}},"required":["steps_done"]})";

// A long-running diagnostic: each step sleeps half its length (timer accuracy) and spends the
// other half timing system calls (kernel entry cost under whatever else runs). Reports progress
// after every step and stops at once when cancelled or out of time.
bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    uint64_t steps = args.find("steps").as_uint64().value_or(10);
    uint64_t step_ns = args.find("step_ms").as_uint64().value_or(100) * 1000000;
    uint64_t syscalls = 0, spent_ns = 0, overshoot_max_ns = 0, done = 0;
    for (; done < steps; ++done) {
        if (ctx.cancelled()) {
            err = { mcp::ErrorCode::InternalError, "cancelled by the client" };
            return false;
        }
        if (ctx.expired()) {
            err = { mcp::ErrorCode::LimitTimeExceeded, "stopped at the wall-time limit" };
            return false;
        }
        uint64_t t0 = clock::monotonic_ns();
        sys::sleep_ns(step_ns / 2);
        uint64_t slept = clock::monotonic_ns() - t0;
        if (slept > step_ns / 2 && slept - step_ns / 2 > overshoot_max_ns)
            overshoot_max_ns = slept - step_ns / 2;
        uint64_t busy_start = clock::monotonic_ns(), busy_end = busy_start + step_ns / 2;
        for (uint32_t guard = 0; guard < 10'000'000; ++guard) {
            sys::clock();
            ++syscalls;
            if ((guard & 255) == 255 && clock::monotonic_ns() >= busy_end)
                break;
        }
        spent_ns += clock::monotonic_ns() - busy_start;
        char msg[48] = "step ";
        size_t i = 5;
        char digits[20];
        for (char c : ktl::format_decimal(done + 1, digits))
            msg[i++] = c;
        msg[i] = '\0';
        ctx.progress(done + 1, steps, msg);
    }
    // The findings also go to the kernel log (and so to a client that asked for log messages).
    KLOG_INFO("diagnose: %llu steps, system call mean %llu ns, sleep overshoot max %llu us",
              static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(syscalls ? spent_ns / syscalls : 0),
              static_cast<unsigned long long>(overshoot_max_ns / 1000));
    w.begin_object().key("steps_done").number(done).key("syscalls").number(syscalls);
    w.key("syscall_mean_ns").number(syscalls ? spent_ns / syscalls : 0);
    w.key("sleep_overshoot_max_us").number(overshoot_max_ns / 1000).end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "kernel_diagnose",
    "Kernel diagnostic (long-running)",
    "Runs timer and system-call checks for a number of steps, reporting progress after each; cancellable.",
    kDiagIn,
    kDiagOut,
    mcp::kKernelRead,
    nullptr
};

} // namespace

MCPD_TOOL(kernel_diagnose) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

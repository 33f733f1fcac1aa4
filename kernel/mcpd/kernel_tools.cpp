// Read-only kernel tools. Each body runs in a tool task of its own holding one capability, the
// introspection (read) its execution token granted for this call (tool_exec.h).
#include "kernel_tools.h"
#include "tool_exec.h"

#include "../board/board.h"
#include "firmware_json.h"
#include "../clock.h"
#include "../platform.h"
#include "../syscall/handlers.h"
#include "../syscall/sys.h"
#include "../version.h"
#include "../arch/aarch64/cpu.h"

#include "../cap/kcap.h"
#include "../log.h"

#include <drivers/generic_timer.h>

#include <ktl/log_ring.h>
#include <mcp/policy/roles.h>

namespace mcpd {


namespace {

const char* kNoArgs = R"({"type":"object","properties":{},"additionalProperties":false})";

const char* kInfoOut = R"({"type":"object","properties":{"name":{"type":"string"},"version":{"type":"string"},)"
                       R"("source_commit":{"type":"string"},"board":{"type":"string"},"model":{"type":"string"},)"
                       R"("cpu":{"type":"string"},"uptime_ms":{"type":"integer"},"time":{"type":"string"},)"
                       R"("memory":{"type":"object"},"tasks":{"type":"integer"},"firmware":{"type":"object"}},)"
                       R"("required":["name","version","source_commit","uptime_ms"]})";

bool kernel_info(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    sysinfo::MemInfo mem {};
    if (sys::call(sys::Number::mem_stats, ctx.cap, reinterpret_cast<uint64_t>(&mem)) < 0) {
        err = { mcp::ErrorCode::InternalError, "memory statistics unavailable" };
        return false;
    }
    sysinfo::TaskInfo tasks[64];
    int64_t ntasks = sys::call(sys::Number::task_list, ctx.cap, reinterpret_cast<uint64_t>(tasks), 64);
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

const char* kTasksOut = R"({"type":"object","properties":{"tasks":{"type":"array","items":{"type":"object",)"
                        R"("properties":{"id":{"type":"integer"},"name":{"type":"string"},"state":{"type":"string"},)"
                        R"("priority":{"type":"integer"},"cpu_ms":{"type":"integer"},"heap_bytes":{"type":"integer"}}}}},)"
                        R"("required":["tasks"]})";

bool kernel_tasks(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    sysinfo::TaskInfo tasks[64];
    int64_t n = sys::call(sys::Number::task_list, ctx.cap, reinterpret_cast<uint64_t>(tasks), 64);
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

const char* kMemOut = R"({"type":"object","properties":{"page_bytes":{"type":"integer"},"total_pages":{"type":"integer"},)"
                      R"("free_pages":{"type":"integer"},"used_pages":{"type":"integer"},"largest_free_block_pages":{"type":"integer"},)"
                      R"("heap":{"type":"object"},"stacks":{"type":"object"},"reclaimed":{"type":"object"}},"required":["total_pages","free_pages"]})";

bool kernel_mem(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    sysinfo::MemInfo mem {};
    if (sys::call(sys::Number::mem_stats, ctx.cap, reinterpret_cast<uint64_t>(&mem)) < 0) {
        err = { mcp::ErrorCode::InternalError, "memory statistics unavailable" };
        return false;
    }
    w.begin_object();
    w.key("page_bytes").number(uint64_t(4096));
    w.key("total_pages").number(mem.total_pages).key("free_pages").number(mem.free_pages);
    w.key("used_pages").number(mem.used_pages).key("largest_free_block_pages").number(mem.largest_free_block);
    w.key("heap").begin_object().key("live_allocations").number(mem.heap_live_allocations);
    w.key("bytes_requested").number(mem.heap_bytes_requested).key("slab_pages").number(mem.heap_slab_pages);
    w.key("large_pages").number(mem.heap_large_pages).end_object();
    w.key("stacks").begin_object().key("used").number(mem.stacks_used).key("total").number(mem.stacks_total).end_object();
    // What tasks that ended (faulted, killed) still held and the kernel took back.
    w.key("reclaimed").begin_object().key("heap_allocations").number(mem.reclaimed_heap_allocations);
    w.key("heap_bytes").number(mem.reclaimed_heap_bytes).key("objects").number(mem.reclaimed_objects);
    w.key("mutexes").number(mem.reclaimed_mutexes).end_object();
    w.end_object();
    return true;
}

const char* kCapsOut = R"({"type":"object","properties":{"task":{"type":"string"},"capabilities":{"type":"array","items":{"type":"object",)"
                       R"("properties":{"slot":{"type":"integer"},"type":{"type":"string"},"rights":{"type":"array"},)"
                       R"("object_id":{"type":"integer"},"badge":{"type":"integer"}}}}},"required":["capabilities"]})";

// The capability table of the task running this very call: what a tool can reach.
bool kernel_caps(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    kcap::CapInfo caps[64]; // this call's own: tool tasks run side by side
    int64_t n = sys::call(sys::Number::cap_list, ctx.cap, reinterpret_cast<uint64_t>(caps), 64);
    if (n < 0) {
        err = { mcp::ErrorCode::InternalError, "capability table unavailable" };
        return false;
    }
    w.begin_object().key("task").string("tool:kernel_caps").key("capabilities").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        const auto& c = caps[i];
        w.begin_object().key("slot").number(c.slot);
        w.key("type").string(kcap::type_name(static_cast<kcap::ObjectType>(c.type)));
        w.key("rights").begin_array();
        for (uint32_t b = 0; b < cap::kRightCount; ++b)
            if (c.rights & (1u << b))
                w.string(cap::kRightNames[b]);
        w.end_array();
        w.key("object_id").number(c.object_id).key("badge").number(c.badge).end_object();
    }
    w.end_array().end_object();
    return true;
}

const char* kLogIn = R"({"type":"object","properties":{)"
                     R"("since":{"type":"integer","minimum":0,"maximum":9007199254740991,"description":"first sequence number wanted"},)"
                     R"("limit":{"type":"integer","minimum":1,"maximum":200,"description":"records at most, default 50"},)"
                     R"("min_level":{"type":"string","maxLength":8,"enum":["debug","info","notice","warning","error","critical"]}},)"
                     R"("additionalProperties":false})";
const char* kLogOut = R"({"type":"object","properties":{"records":{"type":"array","items":{"type":"object",)"
                      R"("properties":{"seq":{"type":"integer"},"uptime_ns":{"type":"integer"},"level":{"type":"string"},"text":{"type":"string"}}}},)"
                      R"("next":{"type":"integer"},"missed":{"type":"integer"}},"required":["records","next"]})";

bool kernel_log(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    uint64_t since = args.find("since").as_uint64().value_or(0);
    uint64_t limit = args.find("limit").as_uint64().value_or(50);
    int min_level = 0;
    json::Value lv = args.find("min_level");
    for (int l = 0; l <= static_cast<int>(ktl::LogLevel::Critical); ++l)
        if (lv.string_equals(ktl::log_level_name(static_cast<ktl::LogLevel>(l))))
            min_level = l;
    ktl::LogRecord rec;
    w.begin_object().key("records").begin_array();
    uint64_t seq = since, missed = 0, count = 0;
    // Bounded: at most the ring's size of records is examined per call.
    for (int guard = 0; guard < 4096 && count < limit; ++guard) {
        int64_t next = sys::call(sys::Number::log_read, ctx.cap, seq, reinterpret_cast<uint64_t>(&rec));
        if (next < 0)
            break;
        if (rec.seq > seq && count == 0 && guard == 0)
            missed = rec.seq - seq; // overwritten before anyone read them
        seq = static_cast<uint64_t>(next);
        if (static_cast<int>(rec.level) < min_level)
            continue;
        w.begin_object().key("seq").number(rec.seq).key("uptime_ns").number(rec.mono_ns);
        w.key("level").string(ktl::log_level_name(rec.level)).key("text").string({ rec.text, rec.length }).end_object();
        ++count;
    }
    w.end_array().key("next").number(seq).key("missed").number(missed).end_object();
    (void)err;
    return true;
}

const char* kPerfIn = R"({"type":"object","properties":{)"
                      R"("iterations":{"type":"integer","minimum":1,"maximum":100000,"description":"system calls to time, default 1000"}},)"
                      R"("additionalProperties":false})";
const char* kPerfOut = R"({"type":"object","properties":{"syscall_ns":{"type":"object"},"counter_hz":{"type":"integer"},)"
                       R"("uptime_ms":{"type":"integer"},"idle_share":{"type":"number"},"context_switches":{"type":"integer"}},)"
                       R"("required":["syscall_ns"]})";

// Times the null system call (clock) from this task: the cost of crossing into the kernel and
// back, measured now, on this machine.
bool kernel_perf(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
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
        sys::call(sys::Number::clock);
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
    sysinfo::TaskInfo tasks[64];
    int64_t n = sys::call(sys::Number::task_list, ctx.cap, reinterpret_cast<uint64_t>(tasks), 64);
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
    uint64_t up = clock::monotonic_ns();
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

const char* kDiagIn = R"({"type":"object","properties":{)"
                      R"("steps":{"type":"integer","minimum":1,"maximum":100,"description":"steps to run, default 10"},)"
                      R"("step_ms":{"type":"integer","minimum":10,"maximum":1000,"description":"length of one step, default 100"}},)"
                      R"("additionalProperties":false})";
const char* kDiagOut = R"({"type":"object","properties":{"steps_done":{"type":"integer"},"syscalls":{"type":"integer"},)"
                       R"("syscall_mean_ns":{"type":"integer"},"sleep_overshoot_max_us":{"type":"integer"}},"required":["steps_done"]})";

// A long-running diagnostic: each step sleeps half its length (timer accuracy) and spends the
// other half timing system calls (kernel entry cost under whatever else runs). Reports progress
// after every step and stops at once when cancelled or out of time.
bool kernel_diagnose(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
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
            sys::call(sys::Number::clock);
            ++syscalls;
            if ((guard & 255) == 255 && clock::monotonic_ns() >= busy_end)
                break;
        }
        spent_ns += clock::monotonic_ns() - busy_start;
        char msg[48] = "step ";
        size_t i = 5;
        uint64_t v = done + 1;
        char digits[20];
        int nd = 0;
        do {
            digits[nd++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v);
        while (nd)
            msg[i++] = digits[--nd];
        msg[i] = '\0';
        ctx.progress(done + 1, steps, msg);
    }
    // The findings also go to the kernel log (and so to a client that asked for log messages).
    KLOG_INFO("diagnose: %llu steps, system call mean %llu ns, sleep overshoot max %llu us",
              static_cast<unsigned long long>(done), static_cast<unsigned long long>(syscalls ? spent_ns / syscalls : 0),
              static_cast<unsigned long long>(overshoot_max_ns / 1000));
    w.begin_object().key("steps_done").number(done).key("syscalls").number(syscalls);
    w.key("syscall_mean_ns").number(syscalls ? spent_ns / syscalls : 0);
    w.key("sleep_overshoot_max_us").number(overshoot_max_ns / 1000).end_object();
    return true;
}

// Every kernel tool reads through the introspection object and nothing else.
constexpr ToolImpl kImpls[] = {
    { "kernel_info", kernel_info, Grant::Introspection, kcap::kRead },
    { "kernel_tasks", kernel_tasks, Grant::Introspection, kcap::kRead },
    { "kernel_caps", kernel_caps, Grant::Introspection, kcap::kRead },
    { "kernel_mem", kernel_mem, Grant::Introspection, kcap::kRead },
    { "kernel_log", kernel_log, Grant::Introspection, kcap::kRead },
    { "kernel_perf", kernel_perf, Grant::Introspection, kcap::kRead },
    { "kernel_diagnose", kernel_diagnose, Grant::Introspection, kcap::kRead },
};

const mcp::Tool kTools[] = {
    { "kernel_info", "Kernel information", "Version, source commit, board, CPU, uptime, UTC time and memory of the appliance.",
      kNoArgs, kInfoOut, mcp::kKernelRead, nullptr },
    { "kernel_tasks", "Kernel tasks", "Every task with its state, priority, CPU time and heap use.", kNoArgs, kTasksOut,
      mcp::kKernelRead, nullptr },
    { "kernel_caps", "Capabilities of a tool task", "The capability table of the task running this call: what one tool call can reach.",
      kNoArgs, kCapsOut, mcp::kKernelRead, nullptr },
    { "kernel_mem", "Kernel memory", "Physical pages, kernel heap, task stacks and what ended tasks left behind.", kNoArgs, kMemOut, mcp::kKernelRead,
      nullptr },
    { "kernel_log", "Kernel log", "Records of the kernel log ring from a sequence number, optionally above a level.",
      kLogIn, kLogOut, mcp::kKernelRead, nullptr },
    { "kernel_perf", "Kernel performance probe", "Times system call round trips now and reports scheduler figures.",
      kPerfIn, kPerfOut, mcp::kKernelRead, nullptr },
    { "kernel_diagnose", "Kernel diagnostic (long-running)",
      "Runs timer and system-call checks for a number of steps, reporting progress after each; cancellable.", kDiagIn,
      kDiagOut, mcp::kKernelRead, nullptr },
};

} // namespace

std::span<const mcp::Tool> kernel_tools() { return kTools; }
std::span<const ToolImpl> kernel_tool_impls() { return kImpls; }

} // namespace mcpd

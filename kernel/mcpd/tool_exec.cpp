#include "tool_exec.h"

#include "../cap/kcap.h"
#include "../clock.h"
#include "../syscall/sys.h"

#include <crypto/sha256.h>

namespace mcpd {
namespace {

constexpr size_t kMaxOutput = 65536; // contracts: output limit per call
constexpr uint64_t kToolPriority = 15; // below the bridge: the tool starts only once it waits

struct Job {
    ToolBody body = nullptr;
    std::string_view args_text;
    uint64_t binding = 0;
    uint32_t token = ~0u;
    uint64_t deadline_ns = 0;
    bool ok = false;
    mcp::ToolError err;
    size_t out_len = 0;
    volatile bool running = false;   // set while a tool task owns this job
    volatile bool abandoned = false; // the bridge stopped waiting (wall-time limit)
};

ExecCaps g_caps;
Job g_job;
char g_out[kMaxOutput];
char g_args[1u << 16];
uint64_t g_calls = 0;

int64_t tool_task_main(void* arg) {
    Job& job = *static_cast<Job*>(arg);
    auto finish = [&job](int64_t code) {
        job.running = false;
        return code;
    };
    // Fail-closed: no token, a stale one or one bound to another call -> the tool never runs.
    int64_t slot = sys::call(sys::Number::token_redeem, job.token, job.binding);
    if (slot < 0) {
        job.ok = false;
        job.err = { mcp::ErrorCode::InternalError, "the execution token was refused; the tool did not run" };
        return finish(1);
    }
    static json::Node nodes[1024];
    auto doc = json::Document::parse(job.args_text, nodes);
    if (!doc) {
        job.ok = false;
        job.err = { mcp::ErrorCode::InternalError, "arguments unreadable in the tool task" };
        return finish(1);
    }
    json::Writer w({ g_out, kMaxOutput });
    ToolContext ctx { static_cast<uint32_t>(slot), job.deadline_ns };
    job.ok = job.body(doc->root(), w, job.err, ctx);
    if (job.ok && !w.complete()) {
        job.ok = false;
        job.err = w.error() == ktl::Error::Full ? mcp::ToolError { mcp::ErrorCode::LimitOutputExceeded, "output over 65,536 bytes" }
                                                : mcp::ToolError { mcp::ErrorCode::InternalError, "malformed tool output" };
    }
    if (job.ok && ctx.expired()) {
        job.ok = false;
        job.err = { mcp::ErrorCode::LimitTimeExceeded, "the tool ran past its wall-time limit" };
    }
    job.out_len = w.size();
    return finish(0);
}

} // namespace

void set_exec_caps(const ExecCaps& caps) { g_caps = caps; }

bool ToolContext::expired() const { return clock::monotonic_ns() >= deadline_ns; }

bool execute(const char* tool_name, ToolBody body, const json::Value& args, json::Writer& w, mcp::ToolError& err) {
    if (g_job.running) { // a call abandoned at its time limit has not stopped yet
        err = { mcp::ErrorCode::LimitConcurrencyExceeded, "a previous call is still running" };
        return false;
    }
    // The tool task gets its own copy of the arguments: the bridge's buffers move on.
    std::string_view text = args.valid() ? args.raw() : std::string_view("{}");
    if (text.size() > sizeof g_args) {
        err = { mcp::ErrorCode::ValidationFailed, "arguments too large" };
        return false;
    }
    for (size_t i = 0; i < text.size(); ++i)
        g_args[i] = text[i];

    // The token is bound to this call: tool, arguments and a per-boot call number.
    crypto::Sha256 h;
    h.update(std::string_view(tool_name));
    h.update(std::string_view("\0", 1));
    h.update(text);
    uint64_t call = ++g_calls;
    h.update(std::string_view(reinterpret_cast<const char*>(&call), sizeof call));
    auto digest = h.finish();
    uint64_t binding = 0;
    for (int i = 0; i < 8; ++i)
        binding = (binding << 8) | digest[i];

    g_job = Job {};
    g_job.body = body;
    g_job.args_text = { g_args, text.size() };
    g_job.binding = binding;
    g_job.deadline_ns = clock::monotonic_ns() + kToolWallLimitNs;
    g_job.running = true;

    char name[24] = "tool:";
    for (size_t i = 5, k = 0; i + 1 < sizeof name && tool_name[k]; ++i, ++k)
        name[i] = tool_name[k];
    int64_t task = sys::call(sys::Number::task_create, g_caps.factory, reinterpret_cast<uint64_t>(&tool_task_main),
                             reinterpret_cast<uint64_t>(&g_job), kToolPriority, reinterpret_cast<uint64_t>(name));
    if (task < 0) {
        g_job.running = false;
        err = { mcp::ErrorCode::InternalError, "no tool task could be started" };
        return false;
    }
    int64_t token = sys::call(sys::Number::token_issue, g_caps.introspection, task, kcap::kRead, binding,
                              kToolWallLimitNs);
    g_job.token = token >= 0 ? static_cast<uint32_t>(token) : ~0u; // the task fails closed without it
    int64_t code = sys::call(sys::Number::task_join, task, kToolWallLimitNs);
    sys::call(sys::Number::cap_delete, task);
    if (code == -static_cast<int64_t>(ktl::Error::TimedOut)) {
        g_job.abandoned = true;
        err = { mcp::ErrorCode::LimitTimeExceeded, "the tool ran past its wall-time limit" };
        return false;
    }
    if (!g_job.ok) {
        err = g_job.err;
        return false;
    }
    w.raw({ g_out, g_job.out_len });
    return true;
}

} // namespace mcpd

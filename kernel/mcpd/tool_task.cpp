// The tool task: the one task a call runs in, with the one capability its token grants.
#include "tool_job.h"

#include "../clock.h"
#include <abi/sys.h>

#include <crypto/sha256.h>

namespace mcpd {

uint64_t call_binding(uint16_t principal_id, const char* tool, std::string_view args, uint64_t call_number,
                      uint64_t provenance_id) {
    crypto::Sha256 h;
    h.update(std::string_view(reinterpret_cast<const char*>(&principal_id), sizeof principal_id));
    h.update(std::string_view(reinterpret_cast<const char*>(&provenance_id), sizeof provenance_id));
    h.update(std::string_view(tool));
    h.update(std::string_view("\0", 1));
    h.update(args);
    h.update(std::string_view(reinterpret_cast<const char*>(&call_number), sizeof call_number));
    auto digest = h.finish();
    uint64_t binding = 0;
    for (int i = 0; i < 8; ++i)
        binding = (binding << 8) | digest[i];
    return binding;
}

int64_t tool_task_main(void* arg) {
    Job& job = *static_cast<Job*>(arg);
    job.task_start_ns = clock::monotonic_ns();
    auto finish = [&job](int64_t code) {
        job.task_end_ns = clock::monotonic_ns();
        job.state = Job::State::Done;
        if (job.wake)
            job.wake();
        return code;
    };
    // The body reads the tree the server parsed (take_buffers), never the text: the tree must be
    // over exactly the text the binding is computed on below, or the tool never runs.
    const std::string_view args(job.args, job.args_len);
    if (!job.arguments.spans(args)) {
        job.ok = false;
        job.err = { mcp::ErrorCode::InternalError, "arguments unreadable in the tool task" };
        return finish(1);
    }
    // Fail-closed: no token, a stale one or one bound to another call -> the tool never runs. The
    // binding is recomputed here, over the very text the tree covers.
    uint64_t binding = call_binding(job.principal_id, job.call.tool, args, job.call.token_id, job.call.provenance_id);
    int64_t slot = sys::token_redeem(job.token, binding);
    ToolContext ctx { slot >= 0 ? static_cast<uint32_t>(slot) : ~0u, &job };
    // The sink policy decides: BLOCK without a redeemed token; STEP_UP asks the human first.
    if (!sink_gate(job.step_up, job.token != ~0u, slot >= 0, ctx, job.err)) {
        job.ok = false;
        return finish(1);
    }
    json::Writer w({ job.out, job.output_limit });
    // The granted capability is the whole table: nothing else was ever put there.
    job.ok = job.body(job.arguments.root(), w, job.err, ctx);
    if (job.ok && !w.complete()) {
        job.ok = false;
        job.err =
            w.error() == ktl::Error::Full
                ? mcp::
                      ToolError { mcp::ErrorCode::LimitOutputExceeded,
                                  "output over the per-call limit (64 KiB, or tool_output_bytes, or the caller's own)" }
                : mcp::ToolError { mcp::ErrorCode::InternalError, "malformed tool output" };
    }
    job.out_len = w.size();
    // Past its system-call budget the tool saw its calls refused and failed in its own terms;
    // the caller is told the real reason.
    if (sys::budget_spent()) {
        job.ok = false;
        job.err = { mcp::ErrorCode::LimitSyscallsExceeded,
                    "the tool used up its system-call budget (100,000, or the caller's own)" };
    }
    return finish(0);
}

} // namespace mcpd

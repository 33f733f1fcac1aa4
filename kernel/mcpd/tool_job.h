#pragma once
// What the bridge and a call's tool task share about one call (tool_exec.h): the Job, and the
// steps of a call that more than one of the executor's files takes. Internal to kernel/mcpd.
#include "sink_gate.h"
#include "tool_exec.h"

#include <mcp/server/input_round.h>

namespace mcpd {

// Arguments up to kInlineArgs use the job's own buffers; larger ones (vector batches) get
// buffers from the kernel heap for the call's lifetime, up to the line's 1 MiB.
constexpr size_t kInlineArgs = 16384;
constexpr size_t kInlineNodes = 512;
constexpr size_t kMaxArgs = 1u << 20;
constexpr size_t kMaxNodes = mcp::Server::kMaxMessageValues; // the most a whole message can hold
// A tool told to stop (cancelled, or past its wall-time limit) that has not ended this much
// later is killed: tools are meant to check should_stop(), but nothing relies on it.
constexpr uint64_t kStopGraceNs = 250'000'000;
// A call that needs the store while it is recovered waits for it in the bridge (no task yet),
// reporting the recovery's progress at most this often; one that runs out of time meanwhile is
// told to try again this much later.
constexpr uint64_t kRecoveryProgressNs = 250'000'000;
constexpr uint32_t kRecoveryRetryMs = 1000;


struct Job {
    // Waiting: admitted, but its tool needs the store, which is being recovered from the disk; its
    // task starts once it is back (or the call's time runs out first). Syncing: its tool changed
    // the store and has ended; its answer waits for the commit that carries the change and the
    // call's audit record (sync_ticket), while the bridge serves other calls.
    enum class State : uint8_t { Free, Waiting, Running, Done, Syncing };
    volatile State state = State::Free;
    ToolBody body = nullptr;
    mcp::PendingCall call;
    char inline_args[kInlineArgs];
    json::Node inline_nodes[kInlineNodes];
    char* args = nullptr;        // inline_args or a heap block
    json::Node* nodes = nullptr; // inline_nodes or a heap block
    size_t args_len = 0;
    size_t node_count = 0;
    // The arguments as the server parsed them, moved into args and nodes (take_buffers): the
    // tree the tool body reads, over exactly the text its token is bound to.
    json::Document arguments;
    uint16_t principal_id = 0; // with the tool, the arguments and the call number: the token's binding
    uint32_t token = ~0u;
    uint32_t source = ~0u; // the bridge's capability the token was issued from, if made for this call
    bool source_transient = false;
    // The token names the cluster, not the collection: a replicated collection this node holds no
    // copy of, read through one of its voters (ToolContext::elsewhere).
    bool elsewhere = false;
    uint32_t task = ~0u; // the bridge's Task capability
    uint64_t deadline_ns = 0;
    uint64_t kill_at_ns = 0; // told to stop: killed if still running then (0: not told)
    volatile bool cancel = false;
    bool answered = false; // the time limit already answered the client
    bool ok = false;
    mcp::ToolError err;
    char out[kToolOutputLimit];
    size_t out_len = 0;
    volatile uint64_t done = 0, total = 0, progress_seq = 0;
    uint64_t progress_sent = 0;
    char message[64] = "";
    void (*wake)() = nullptr; // the bridge's
    size_t output_limit = kToolOutputLimit;
    // ToolContext::log records: the tool task fills slot log_head % kLogSlots, the bridge sends
    // and frees them in order (log_tail).
    static constexpr uint32_t kLogSlots = 8;
    struct LogSlot {
        mcp::LogLevel level;
        char text[120];
    } logs[kLogSlots];
    uint32_t log_head = 0, log_tail = 0;
    // ToolContext::request: asked for by the tool task on its first request, allocated by the
    // bridge (charged to it, so it outlives a tool task that dies), freed when the call is reaped.
    mcp::ClientExchange* exchange = nullptr;
    volatile bool exchange_wanted = false;
    volatile bool exchange_refused = false; // no memory for it
    // 2026-07-28 calls of a tool that asks: the client's answers and this round's requests
    // (allocated by the bridge at start, freed when the call is reaped).
    mcp::InputRound* round = nullptr;
    // The sink policy's view of the call (sink_gate.h), found out by the bridge at start.
    StepUp step_up;
    const ToolDef* def = nullptr; // what a Waiting call will run
    uint64_t memory_limit = 0;    // its task's (task_limit), tightened by the caller's own
    uint64_t syscall_limit = 0;
    uint64_t wait_reported_ns = 0; // a Waiting call's last progress notification
    // The tool task's first and last readings of the clock (CallStages::Body), set by the task.
    uint64_t task_start_ns = 0, task_end_ns = 0;
    // A Syncing call: the verdict already audited, and the commit its answer waits for.
    mcp::Server::Closed closed {};
    uint64_t sync_ticket = 0;
};

constexpr uint64_t kToolPriority = 15; // below the bridge: a tool starts once the bridge waits

// What a token is bound to: who calls, which tool, with which argument text, as which call, on
// behalf of which provenance node. The bridge computes it to issue the token; the tool task
// computes it again from the text its argument tree covers and the node it will act for, so a token
// redeems only for exactly what runs (a node that differs: refused, the tool never runs).
uint64_t call_binding(uint16_t principal_id, const char* tool, std::string_view args, uint64_t call_number,
                      uint64_t provenance_id);

// The tool task's entry (tool_task.cpp): redeems the token, runs the body on the job's tree.
int64_t tool_task_main(void* arg);

// The call's buffers and capabilities (tool_job.cpp).
void release_buffers(Job& job);
bool take_buffers(Job& job, const json::Value& arguments);
void release_call(Job& job);
// elsewhere: set when the source is the cluster capability standing for a replicated collection
// other nodes hold (a read the tool serves through one of its voters).
ktl::Result<uint32_t> token_source(ExecCaps& caps, const ToolDef& def, const json::Value& arguments, bool* transient,
                                   bool* elsewhere);
mcp::ToolError source_error(ktl::Error e);
bool needs_store(const ToolDef& def);

// The store's recovery as a bridge sees it: whether it goes on, and how many logged changes are
// back so far.
struct Recovery {
    bool ongoing;
    uint64_t replayed;
};
Recovery recovery(const ExecCaps& caps);
mcp::ToolError still_recovering(uint64_t replayed);

} // namespace mcpd

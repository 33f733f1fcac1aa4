#pragma once
// No direct execution (contracts, steps 8-9): every admitted tools/call runs in a task of its
// own. The bridge (the MCP task) creates the task with an empty capability table and has the
// kernel issue it one single-use execution token, bound to this call (tool name, argument hash,
// call number) and expiring with the call's wall-time limit. The tool task redeems the token for
// the one capability the tool needs and runs; without a valid token it refuses to run
// (fail-closed). What that capability is comes from the tool's ToolDef (tools/tool_def.h): its
// Grant and rights, found through the descriptor the server matched. Introspection (read) for
// the kernel tools, the vector store with one right for collection_create/list/drop, and for the
// other vector tools the one collection the call names, with read or write only. Calls run concurrently with the line:
// the bridge keeps reading requests, forwards progress, passes on cancellation and answers each call when it ends.
#include <cstdint>

#include <json/json.h>
#include <json/writer.h>
#include <mcp/server/client_request.h>
#include <mcp/server/server.h>

#include "tools/tool_def.h"
#include "tools/tool_table.h"

namespace mcpd {

constexpr uint64_t kDefaultWallLimitNs = 10'000'000'000ull;
constexpr size_t kToolOutputLimit = 65536; // contracts: output limit per call
// Per-call memory (contracts "Per-call limits"): the tool task's own kernel heap, scratch of the
// vector tools included (the arguments' buffers belong to the bridge).
constexpr uint64_t kToolHeapLimit = 8u << 20;  // each tool task's kernel heap (task_limit)
constexpr uint64_t kToolSyscallLimit = 100000; // each tool task's system calls (task_limit)
constexpr size_t kMaxCalls = 10;               // tool tasks at once: the contracts' default in-flight cap per principal
// A human's time to confirm a destructive call (sink_gate.h), on top of the call's limit: within
// the longest a token may live (60 s, token_issue).
constexpr uint64_t kConfirmNs = 45'000'000'000ull;

// The bridge's capabilities for starting tool tasks.
struct ExecCaps {
    uint32_t factory = ~0u;       // task_create
    uint32_t introspection = ~0u; // tokens for the kernel tools (needs Grant)
    uint32_t store = ~0u;         // the vector store: tokens for it, store_open for collections
    uint32_t inert = ~0u;         // created on first use: the object of Grant::Nothing tokens
    uint32_t cluster = ~0u;       // cluster membership: tokens for the cluster tools (needs Grant)
};

struct Job;
struct StepUp;

// The client's answer to ToolContext::request: its result object, or (is_error) its JSON-RPC
// error object, parsed. Valid until the call's next request.
struct ClientAnswer {
    json::Document doc;
    json::Value value;
    bool is_error = false;
};

// What a tool body sees: the capability slot its token granted, its deadline, cancellation,
// ways to report progress and to log (notifications/message tied to this call, sent before
// its result at the level the client asked for; nothing goes to the kernel log), and requests
// to the client (sampling, elicitation).
struct ToolContext {
    uint32_t cap; // the one capability in the task's table

    Job* job;
    bool expired() const;   // past the wall-time limit
    bool cancelled() const; // the client sent notifications/cancelled
    bool should_stop() const { return expired() || cancelled(); }
    const char* tool() const; // the tool's name
    // `cap` is the cluster's, standing for a replicated collection this node holds no copy of: a
    // read is served by one of its voters (vec::read_elsewhere).
    bool elsewhere() const;
    // The provenance node the call acts for (the token was redeemed against it): what the tool
    // stores remembers it.
    uint64_t provenance() const;
    void progress(uint64_t done, uint64_t total, const char* message) const;
    // Queues one record for the bridge (text cut at 119 bytes on a UTF-8 boundary); waits while
    // the call's queue is full. False when the call was told to stop first.
    bool log(mcp::LogLevel level, const char* text) const;
    // A request to the client while the call runs (MCP "Sampling", "Elicitation", "Roots"):
    // `method` with the params write(json::Writer&) puts down (one object, at most 8 KiB).
    //  - 2025 revisions: the bridge sends it on this call's own stream (HTTP: its SSE response;
    //    the serial line: a line) under an id of its own, and routes the client's response back by
    //    id and session. One at a time; waits until the answer is in, the call is cancelled or
    //    past its wall-time limit, or timeout_ns (0: none) has passed.
    //  - 2026-07-28 (input rounds, mcp/server/input_round.h): the answer is the one the client
    //    sent under `key` with this request, if any. Otherwise the request is noted and false
    //    comes back (reason "input_required"): the body should ask what else it can and return
    //    false; the call then ends with an InputRequiredResult and runs again, from the start,
    //    when the client sends the answers. Bodies must therefore do nothing irreversible before
    //    they have all their answers.
    // False + err: the client did not declare the capability the method needs, the request did
    // not fit, the answer was over 16 KiB or too complex to parse, or the wait ended without one.
    // A JSON-RPC error from the client is an answer (is_error): the tool decides what it means.
    template <typename Write>
    bool request(std::string_view key, std::string_view method, Write&& write, ClientAnswer& answer,
                 mcp::ToolError& err, uint64_t timeout_ns = 0) const {
        if (in_rounds()) {
            std::span<char> params;
            if (from_round(key, method, answer, err, params))
                return true;
            if (params.empty())
                return false;
            json::Writer w(params);
            write(w);
            return ask_round(key, method, w, err);
        }
        mcp::ClientExchange* ex = exchange(method, err);
        if (!ex)
            return false;
        json::Writer w(ex->params_buffer());
        write(w);
        return await(*ex, method, w, answer, err, timeout_ns);
    }

    // Whether the client declared what `method` needs (a body asks only what can be answered).
    bool can_ask(std::string_view method) const;

private:
    bool in_rounds() const; // the call is of 2026-07-28
    // The round's answer under key (true), or false: err set and params empty when the request
    // cannot be made, else params is where its params go (ask_round then).
    bool from_round(std::string_view key, std::string_view method, ClientAnswer& answer, mcp::ToolError& err,
                    std::span<char>& params) const;
    bool ask_round(std::string_view key, std::string_view method, const json::Writer& params,
                   mcp::ToolError& err) const;
    mcp::ClientExchange* exchange(std::string_view method, mcp::ToolError& err) const;
    bool await(mcp::ClientExchange& ex, std::string_view method, const json::Writer& params, ClientAnswer& answer,
               mcp::ToolError& err, uint64_t timeout_ns) const;
};

// The tool tasks of one bridge (the serial line's, the HTTP server's): up to `slots` calls at
// once (all callers of the bridge together), each in its own task. Used only from the bridge's task.
class Executor {
public:
    // wake: returns the bridge from its wait when a call ends or reports progress.
    // Limits of 0 keep the defaults; others may only tighten them.
    void configure(const ExecCaps& caps, uint64_t wall_limit_ns, size_t output_limit, void (*wake)(),
                   size_t slots = kMaxCalls);

    // The bridge's Host::start / cancel (bridge.h) for the kernel's tools.
    bool start(const mcp::Tool& tool, const json::Value& arguments, const mcp::PendingCall& call, mcp::ToolError& err);
    void cancel(std::string_view raw_id, bool id_is_string, uint32_t origin);
    // The bridge's Host::respond: hands a response to the call whose request it answers (same
    // id, same session); one that answers nothing of ours is dropped (logged at debug).
    void respond(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error, uint32_t origin);
    // Output for a call: a progress notification (final false) or its answer (final true; len 0
    // when a cancelled call gets none). The message is out[0..len).
    using Send = void (*)(void* ctx, const mcp::PendingCall& call, size_t len, bool final);
    // Called by the bridge whenever it wakes: answers finished calls, times out late ones,
    // forwards progress and sends the calls' requests to the client.
    void poll(mcp::Server& server, std::span<char> out, Send send, void* ctx);
    bool in_flight() const;
    // A call admitted more than `ns` ago whose tool is still running (or not yet started): behind a
    // bridge that never waits, its task (a priority below the bridge) may not be getting the CPU.
    bool overdue(uint64_t now_ns, uint64_t ns) const;
    // The lowest log level a running call opted into (2026-07-28 per-request logging), -1: none.
    int log_floor() const;

private:
    bool start_approved(const mcp::Tool& tool, uint64_t proposal_id, const mcp::PendingCall& call, mcp::ToolError& err);
    bool launch(const mcp::Tool& tool, const ToolDef& def, const json::Value& arguments, const mcp::PendingCall& call,
                const StepUp& step, mcp::ToolError& err);
    bool spawn(Job& job, uint32_t source, bool transient, mcp::ToolError& err);
    ExecCaps m_caps;
    void (*m_wake)() = nullptr;
    uint64_t m_wall_limit_ns = 0;
    size_t m_output_limit = 0;
    Job* m_jobs = nullptr; // m_slots of them, from the kernel heap at configure()
    size_t m_slots = 0;
    uint64_t m_requests = 0; // requests sent to clients: their ids are "srv-<n>"
};


} // namespace mcpd

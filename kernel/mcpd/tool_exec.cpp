#include "tool_exec.h"

#include "../arch/aarch64/cpu.h"
#include "../cap/kcap.h"
#include "../clock.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../storage/journal.h"
#include "../storage/storage_info.h"
#include "../syscall/sys.h"
#include "../vector/store.h"
#include "provenance_log.h"
#include "sink_gate.h"
#include "tools/fault/tamper.h"

#include <crypto/sha256.h>
#include <ktl/format.h>
#include <ktl/utf8.h>
#include <mcp/server/input_round.h>

#include <new>

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
    // task starts once it is back (or the call's time runs out first).
    enum class State : uint8_t { Free, Waiting, Running, Done };
    volatile State state = State::Free;
    ToolBody body = nullptr;
    mcp::PendingCall call;
    char inline_args[kInlineArgs];
    json::Node inline_nodes[kInlineNodes];
    char* args = nullptr;        // inline_args or a heap block
    json::Node* nodes = nullptr; // inline_nodes or a heap block
    size_t args_len = 0;
    size_t node_count = 0;
    uint16_t principal_id = 0; // with the tool, the arguments and the call number: the token's binding
    uint32_t token = ~0u;
    uint32_t source = ~0u; // the bridge's capability the token was issued from, if made for this call
    bool source_transient = false;
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
};

namespace {

constexpr uint64_t kToolPriority = 15; // below the bridge: a tool starts once the bridge waits

uint64_t g_calls = 0; // per boot, across bridges (incremented with IRQs masked: see start())

// What a token is bound to: who calls, which tool, with which argument text, as which call, on
// behalf of which provenance node. The bridge computes it to issue the token; the tool task
// computes it again from the text it is about to parse and the node it will act for, so a token
// redeems only for exactly what runs (a node that differs: refused, the tool never runs).
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
    // Fail-closed: no token, a stale one or one bound to another call -> the tool never runs. The
    // binding is recomputed here, over the very text parsed below.
    const std::string_view args(job.args, job.args_len);
    uint64_t binding = call_binding(job.principal_id, job.call.tool, args, job.call.token_id, job.call.provenance_id);
    int64_t slot = sys::token_redeem(job.token, binding);
    ToolContext ctx { slot >= 0 ? static_cast<uint32_t>(slot) : ~0u, &job };
    // The sink policy decides: BLOCK without a redeemed token; STEP_UP asks the human first.
    if (!sink_gate(job.step_up, job.token != ~0u, slot >= 0, ctx, job.err)) {
        job.ok = false;
        return finish(1);
    }
    auto doc = json::Document::parse(args, { job.nodes, job.node_count });
    if (!doc) {
        job.ok = false;
        job.err = { mcp::ErrorCode::InternalError, "arguments unreadable in the tool task" };
        return finish(1);
    }
    json::Writer w({ job.out, job.output_limit });
    // The granted capability is the whole table: nothing else was ever put there.
    job.ok = job.body(doc->root(), w, job.err, ctx);
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

} // namespace

void Executor::configure(const ExecCaps& caps, uint64_t wall_limit_ns, size_t output_limit, void (*wake)(),
                         size_t slots) {
    m_caps = caps;
    m_wake = wake;
    // Overrides only tighten.
    m_wall_limit_ns = wall_limit_ns != 0 && wall_limit_ns < kDefaultWallLimitNs ? wall_limit_ns : kDefaultWallLimitNs;
    m_output_limit = output_limit != 0 && output_limit < kToolOutputLimit ? output_limit : kToolOutputLimit;
    if (m_jobs)
        return;
    auto mem = kheap::alloc(sizeof(Job) * slots);
    if (!mem) {
        KLOG_ERROR("mcp: no memory for the tool task table; every call will be refused");
        return;
    }
    m_jobs = static_cast<Job*>(*mem);
    m_slots = slots;
    for (size_t i = 0; i < slots; ++i)
        new (&m_jobs[i]) Job;
}

bool ToolContext::expired() const { return clock::monotonic_ns() >= job->deadline_ns; }
bool ToolContext::cancelled() const { return job->cancel; }
const char* ToolContext::tool() const { return job->call.tool; }
uint64_t ToolContext::provenance() const { return job->call.provenance_id; }

void ToolContext::progress(uint64_t done, uint64_t total, const char* message) const {
    // One report in flight: wait (bounded) until the bridge has sent the previous one, so a
    // client sees every step in order instead of the latest only.
    for (int i = 0;
         i < 200 && __atomic_load_n(&job->progress_sent, __ATOMIC_ACQUIRE) != job->progress_seq && !should_stop(); ++i)
        sys::sleep_ns(1'000'000);
    size_t i = 0;
    for (; message && message[i] && i + 1 < sizeof job->message; ++i)
        job->message[i] = message[i];
    job->message[i] = '\0';
    job->done = done;
    job->total = total;
    job->progress_seq = job->progress_seq + 1;
    if (job->wake)
        job->wake();
}

bool ToolContext::log(mcp::LogLevel level, const char* text) const {
    while (job->log_head - __atomic_load_n(&job->log_tail, __ATOMIC_ACQUIRE) == Job::kLogSlots) {
        if (should_stop())
            return false;
        sys::sleep_ns(1'000'000);
    }
    Job::LogSlot& slot = job->logs[job->log_head % Job::kLogSlots];
    // Cut between characters: the record stays valid UTF-8.
    ktl::utf8_copy(slot.text, sizeof slot.text,
                   text ? std::string_view(text, __builtin_strnlen(text, sizeof slot.text)) : "");
    slot.level = level;
    __atomic_store_n(&job->log_head, job->log_head + 1, __ATOMIC_RELEASE);
    if (job->wake)
        job->wake();
    return true;
}

bool ToolContext::in_rounds() const { return job->call.modern; }

bool ToolContext::can_ask(std::string_view method) const { return mcp::may_ask(job->call.client_caps, method); }

bool ToolContext::from_round(std::string_view key, std::string_view method, ClientAnswer& answer, mcp::ToolError& err,
                             std::span<char>& params) const {
    params = {};
    mcp::InputRound* round = job->round;
    if (!round) {
        err = { mcp::ErrorCode::InternalError, "this tool has no input round" };
        return false;
    }
    if (!can_ask(method)) {
        err = { mcp::ErrorCode::ValidationFailed,
                "the client did not declare the capability this needs (sampling, elicitation or roots)",
                "client_capability_missing" };
        return false;
    }
    json::Value given = round->answer(key);
    if (given.valid()) {
        answer.value = given;
        answer.is_error = false;
        return true;
    }
    params = round->params_buffer();
    return false;
}

bool ToolContext::ask_round(std::string_view key, std::string_view method, const json::Writer& params,
                            mcp::ToolError& err) const {
    if (!params.complete() || !job->round->ask(key, method, params.size())) {
        err = { mcp::ErrorCode::ValidationFailed, "the input requests of this round are over their limit",
                "request_too_large" };
        return false;
    }
    err = { mcp::ErrorCode::ValidationFailed, "waiting for the client's input", "input_required" };
    return false;
}

mcp::ClientExchange* ToolContext::exchange(std::string_view method, mcp::ToolError& err) const {
    if (!can_ask(method)) {
        err = { mcp::ErrorCode::ValidationFailed,
                mcp::capability_for(method) == 0
                    ? "not a request this server sends to clients"
                    : "the client did not declare the capability this needs (sampling or elicitation)",
                "client_capability_missing" };
        return nullptr;
    }
    // The bridge allocates it (Executor::poll), so it never belongs to this task, whose memory
    // the kernel takes back if it dies: wait for it, bounded by the call's own stop.
    mcp::ClientExchange* ex = __atomic_load_n(&job->exchange, __ATOMIC_ACQUIRE);
    if (!ex) {
        job->exchange_wanted = true;
        if (job->wake)
            job->wake();
        while (!(ex = __atomic_load_n(&job->exchange, __ATOMIC_ACQUIRE)) && !job->exchange_refused && !should_stop())
            sys::sleep_ns(1'000'000);
    }
    if (!ex)
        err = job->exchange_refused
                  ? mcp::ToolError { mcp::ErrorCode::InternalError, "no memory for a request to the client" }
              : cancelled() ? mcp::ToolError { mcp::ErrorCode::InternalError, "cancelled by the client" }
                            : mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded, "stopped at the wall-time limit" };
    return ex;
}

bool ToolContext::await(mcp::ClientExchange& ex, std::string_view method, const json::Writer& params,
                        ClientAnswer& answer, mcp::ToolError& err, uint64_t timeout_ns) const {
    if (!params.complete()) {
        err = { mcp::ErrorCode::ValidationFailed, "request to the client over 8 KiB", "request_too_large" };
        return false;
    }
    if (!ex.queue(method, params.size())) {
        err = { mcp::ErrorCode::InternalError, "a request to the client is already outstanding" };
        return false;
    }
    if (job->wake)
        job->wake();
    uint64_t until = timeout_ns ? clock::monotonic_ns() + timeout_ns : ~0ull;
    // Bounded by the call's deadline (should_stop() holds past it). Once the bridge has begun
    // copying an answer it cannot be withdrawn: wait the few microseconds until it is in.
    while (ex.state() != mcp::ClientExchange::State::Answered) {
        bool stop = should_stop() || clock::monotonic_ns() >= until;
        if (stop && ex.withdraw()) {
            err = cancelled()
                      ? mcp::ToolError { mcp::ErrorCode::InternalError, "cancelled by the client" }
                      : mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded, "no answer from the client in time" };
            return false;
        }
        sys::sleep_ns(stop ? 100'000 : 2'000'000);
    }
    switch (ex.outcome()) {
    case mcp::ClientExchange::Outcome::TooLarge:
        err = { mcp::ErrorCode::ValidationFailed, "the client's answer is over 16 KiB", "response_too_large" };
        return false;
    case mcp::ClientExchange::Outcome::Unsent:
        err = { mcp::ErrorCode::InternalError, "the request to the client could not be sent" };
        return false;
    case mcp::ClientExchange::Outcome::Result:
    case mcp::ClientExchange::Outcome::Error: break;
    }
    auto doc = json::Document::parse(ex.response(), ex.nodes());
    if (!doc) {
        err = { mcp::ErrorCode::ValidationFailed, "the client's answer has too many values", "response_too_complex" };
        return false;
    }
    answer.doc = *doc;
    answer.value = answer.doc.root();
    answer.is_error = ex.outcome() == mcp::ClientExchange::Outcome::Error;
    return true;
}

bool Executor::in_flight() const {
    for (size_t i = 0; i < m_slots; ++i)
        if (m_jobs[i].state != Job::State::Free)
            return true;
    return false;
}

int Executor::log_floor() const {
    int floor = -1;
    for (const auto& j : std::span<const Job>(m_jobs, m_slots))
        if (j.state != Job::State::Free && j.call.log_level >= 0 && (floor < 0 || j.call.log_level < floor))
            floor = j.call.log_level;
    return floor;
}

namespace {

void release_buffers(Job& job) {
    if (job.args && job.args != job.inline_args)
        kheap::free(job.args);
    if (job.nodes && job.nodes != job.inline_nodes)
        kheap::free(job.nodes);
    if (job.exchange)
        kheap::free(job.exchange);
    if (job.round)
        kheap::free(job.round);
    job.args = nullptr;
    job.nodes = nullptr;
    job.exchange = nullptr;
    job.round = nullptr;
}

// Buffers for the tool task's copy of the arguments (the bridge's line buffer moves on) and for
// parsing it: as many nodes as the text can hold values.
bool take_buffers(Job& job, std::string_view text) {
    size_t nodes = json::value_bound(text);
    nodes = nodes < kMaxNodes ? nodes : kMaxNodes;
    job.args = job.inline_args;
    job.nodes = job.inline_nodes;
    job.node_count = kInlineNodes;
    if (text.size() > kInlineArgs) {
        auto mem = kheap::alloc(text.size());
        if (!mem)
            return false;
        job.args = static_cast<char*>(*mem);
    }
    if (nodes > kInlineNodes) {
        auto mem = kheap::alloc(nodes * sizeof(json::Node));
        if (!mem) {
            release_buffers(job);
            return false;
        }
        job.nodes = static_cast<json::Node*>(*mem);
        job.node_count = nodes;
    }
    for (size_t i = 0; i < text.size(); ++i)
        job.args[i] = text[i];
    job.args_len = text.size();
    return true;
}

// The object of Grant::Nothing tokens: one event per bridge, created once and never signalled.
ktl::Result<uint32_t> inert_event(ExecCaps& caps) {
    if (caps.inert == ~0u) {
        int64_t created = sys::event_create(caps.factory, 0);
        if (created < 0)
            return static_cast<ktl::Error>(-created);
        caps.inert = static_cast<uint32_t>(created);
    }
    return caps.inert;
}

// The capability (in the bridge's table) that this call's token is issued for. For a
// collection tool that is a fresh capability to the named collection only, which the bridge
// deletes again once the token exists (*transient). NotFound when the collection is absent.
ktl::Result<uint32_t> token_source(ExecCaps& caps, const ToolDef& def, const json::Value& arguments, bool* transient) {
    *transient = false;
    switch (def.grant) {
    case Grant::Introspection: return caps.introspection;
    case Grant::Store: return caps.store;
    case Grant::Nothing: return inert_event(caps);
    case Grant::Cluster: return caps.cluster;
    case Grant::Collection: break;
    }
    // The schema already required a plain name; the store checks it once more.
    auto name = arguments.find("collection").plain_string();
    if (!name || name->empty() || name->size() > vector::kMaxNameLength)
        return ktl::Error::InvalidArgs;
    int64_t slot = sys::store_open(caps.store, name->data(), name->size(), def.rights | kcap::kGrant);
    if (slot < 0)
        return static_cast<ktl::Error>(-slot);
    *transient = true;
    return static_cast<uint32_t>(slot);
}

// What a token source that could not be had means for the caller.
mcp::ToolError still_recovering(uint64_t replayed);
mcp::ToolError source_error(ktl::Error e) {
    if (e == ktl::Error::NotFound)
        return { mcp::ErrorCode::NotFound, "no collection of that name", "missing_collection" };
    if (e == ktl::Error::NotReady)
        return still_recovering(0);
    return { mcp::ErrorCode::ValidationFailed, "not a valid collection name", "invalid_name" };
}

// Tools whose calls reach the store (a collection's capability, or the store's).
bool needs_store(const ToolDef& def) { return def.grant == Grant::Store || def.grant == Grant::Collection; }

// The store's recovery as a bridge sees it: whether it goes on, and how many logged changes are
// back so far.
struct Recovery {
    bool ongoing;
    uint64_t replayed;
};
Recovery recovery(const ExecCaps& caps) {
    storage_info::StorageInfo info {};
    if (sys::storage_info(caps.introspection, &info) < 0)
        return { false, 0 }; // nothing to wait for that can be seen: the call runs and finds out
    return { info.state == static_cast<uint8_t>(journal::State::Recovering), info.recovery_progress };
}

// A call whose time ran out while the store was still being recovered: retryable, never a failure
// of the call itself.
mcp::ToolError still_recovering(uint64_t replayed) {
    mcp::ToolError e { mcp::ErrorCode::Unavailable,
                       "the store is still being recovered from the disk: try again after details.retry_after_ms",
                       "recovering" };
    e.retry_after_ms = kRecoveryRetryMs;
    e.replayed_so_far = static_cast<int64_t>(replayed);
    return e;
}

void release_call(Job& job) {
    release_buffers(job);
    job.state = Job::State::Free;
}

} // namespace

bool Executor::start(const mcp::Tool& tool, const json::Value& arguments, const mcp::PendingCall& call,
                     mcp::ToolError& err) {
    // The definition behind the descriptor the server matched: what the call may do comes from it.
    const ToolDef* def = def_of(tool);
    if (!def) {
        err = { mcp::ErrorCode::InternalError, "no body for this tool" };
        return false;
    }
    const std::string_view name(tool.name);
    const uint64_t proposal = arguments.find("proposal_id").as_uint64().value_or(0);
    if (def->flow == Flow::ApproveProposal)
        return start_approved(tool, proposal, call, err);
    if (def->flow == Flow::RejectProposal && !reject(static_cast<uint32_t>(proposal), call, err))
        return false;
    // The sink policy: a critical sink is checked against the store now; a client that cannot be
    // asked gets a proposal instead of the call (the tool task asks the others).
    StepUp step = classify(*def, arguments);
    if (step.critical) {
        auto facts = target_facts(m_caps.store, step.target);
        if (!facts && facts.error() == ktl::Error::NotReady) {
            err = still_recovering(recovery(m_caps).replayed); // the policy needs the store as it will be
            return false;
        }
        if (!facts) {
            err = { mcp::ErrorCode::InternalError, "the collection could not be checked; try again",
                    "target_unreadable" };
            return false;
        }
        step.facts = *facts;
        derive_confirm_key(step, call.principal ? call.principal->id : 0, call.args_hash);
        if (!step.facts.exists && step.sink != mcp::Sink::Create) {
            err = { mcp::ErrorCode::NotFound, "no collection of that name", "missing_collection" };
            return false;
        }
        if (!mcp::may_ask(call.client_caps, "elicitation/create")) {
            propose(step, name, arguments.valid() ? arguments.raw() : std::string_view("{}"), call, err);
            return false;
        }
    }
    return launch(tool, *def, arguments, call, step, err);
}

// proposal_approve: the proposal's own call, exactly as proposed, under the approving call's name
// (its token is bound to that and to the proposal's argument text) and with the capability the
// proposed tool needs; approved, so the tool task does not ask again.
bool Executor::start_approved(const mcp::Tool& tool, uint64_t id, const mcp::PendingCall& call, mcp::ToolError& err) {
    auto mem = kheap::alloc(mcp::Proposal::kMaxArgs);
    if (!mem) {
        err = { mcp::ErrorCode::InternalError, "no memory for the proposal" };
        return false;
    }
    char* text = static_cast<char*>(*mem);
    char effect[32];
    size_t len = 0;
    StepUp step;
    bool ok = id <= 0xffffffffull && approve(static_cast<uint32_t>(id), call, m_caps.store, effect, text,
                                             mcp::Proposal::kMaxArgs, len, step, err);
    if (!ok && id > 0xffffffffull)
        err = { mcp::ErrorCode::NotFound, "no proposal with that id", "unknown_proposal" };
    const bool approved = ok;
    const ToolDef* def = ok ? def_named(effect) : nullptr; // a proposal keeps its tool's name
    if (ok && !def) {
        err = { mcp::ErrorCode::InternalError, "the proposal's tool is gone" };
        ok = false;
    }
    json::Node* nodes = nullptr;
    if (ok) {
        const std::string_view args(text, len);
        const size_t need = json::value_bound(args) + 1;
        auto nodes_mem = kheap::alloc(need * sizeof(json::Node));
        nodes = nodes_mem ? static_cast<json::Node*>(*nodes_mem) : nullptr;
        auto doc = nodes ? json::Document::parse(args, { nodes, need })
                         : ktl::Result<json::Document>(ktl::Error::NoMemory);
        if (!doc) {
            err = { mcp::ErrorCode::InternalError, "the proposal's arguments could not be read" };
            ok = false;
        } else {
            // The call runs as work derived from the proposal: a node of its own (the approver's)
            // whose parent is the proposing request's, so its decision leads back to the proposal.
            mcp::ProvenanceNode derived;
            derived.parent = step.proposed_at;
            derived.principal = call.principal;
            derived.transport = "approval";
            derived.session = call.origin;
            derived.request_id = call.request_id;
            derived.method = "proposal_approve";
            mcp::PendingCall as_derived = call;
            if (uint64_t node = provenance_log_record(derived))
                as_derived.provenance_id = node;
            // The trail names what the approval ran, not only the proposal's number.
            ktl::Formatter(as_derived.target, sizeof as_derived.target).append("%s %s", effect, step.target);
            ok = launch(tool, *def, doc->root(), as_derived, step, err);
        }
    }
    if (approved && !ok) // not started after all (no task slot, no memory): it can be approved again
        reopen_proposal(static_cast<uint32_t>(id));
    if (nodes)
        kheap::free(nodes);
    kheap::free(text);
    return ok;
}

bool Executor::launch(const mcp::Tool& tool, const ToolDef& def, const json::Value& arguments,
                      const mcp::PendingCall& call, const StepUp& step, mcp::ToolError& err) {
    Job* job = nullptr;
    for (size_t i = 0; i < m_slots; ++i)
        if (!job && m_jobs[i].state == Job::State::Free)
            job = &m_jobs[i];
    if (!job) {
        err = { mcp::ErrorCode::LimitConcurrencyExceeded, "every tool task slot is busy" };
        return false;
    }
    std::string_view text = arguments.valid() ? arguments.raw() : std::string_view("{}");
    if (text.size() > kMaxArgs) {
        err = { mcp::ErrorCode::ValidationFailed, "arguments over 1 MiB", "arguments_too_long" };
        return false;
    }
    // A call that needs the store while it is recovered waits for it (poll() starts its task once
    // it is back); every other call starts now, whatever recovery is doing.
    const bool waits = needs_store(def) && recovery(m_caps).ongoing;
    // Fail-closed before any task exists: the object the token is to name must be there.
    bool transient = false;
    ktl::Result<uint32_t> source = ktl::Error::NotReady;
    if (!waits) {
        source = token_source(m_caps, def, arguments, &transient);
        if (!source && source.error() != ktl::Error::NotReady) {
            err = source_error(source.error());
            return false;
        }
    }
    auto drop_source = [&] {
        if (source && transient)
            sys::cap_delete(*source);
    };
    if (!take_buffers(*job, text)) {
        drop_source();
        err = { mcp::ErrorCode::InternalError, "no memory for the call's arguments" };
        return false;
    }
    job->state = source ? Job::State::Running : Job::State::Waiting;
    job->def = &def;
    job->wait_reported_ns = 0;
    job->task_start_ns = job->task_end_ns = 0;
    job->task = ~0u;
    job->token = ~0u;
    job->source_transient = false;
    job->body = def.body;
    job->call = call;
    job->cancel = false;
    job->answered = false;
    job->ok = false;
    job->err = {};
    job->out_len = 0;
    job->done = 0;
    job->total = 0;
    job->progress_seq = 0;
    job->progress_sent = 0;
    job->message[0] = '\0';
    job->log_head = job->log_tail = 0;
    job->exchange = nullptr;
    job->exchange_wanted = false;
    job->exchange_refused = false;
    job->round = nullptr;
    job->step_up = step;
    job->call.answers = job->call.carried = {}; // the bridge's buffers: copied into the round below
    // A call the human must confirm asks like a tool that asks (2026-07-28: in input rounds).
    const bool confirms = step.critical && !step.approved;
    if (call.modern && (def.asks || confirms)) {
        auto mem = kheap::alloc(sizeof(mcp::InputRound));
        if (mem)
            job->round = new (*mem) mcp::InputRound;
        if (!job->round || !job->round->load(call.answers, call.carried)) {
            err = job->round ? mcp::ToolError { mcp::ErrorCode::ValidationFailed,
                                                "the input responses have too many values", "input_too_large" }
                             : mcp::ToolError { mcp::ErrorCode::InternalError, "no memory for the call's input round" };
            release_call(*job);
            drop_source();
            return false;
        }
        job->round->set_caps(call.client_caps);
    }
    // The caller's own overrides may tighten the bridge's limits, never loosen them.
    const mcp::PrincipalLimits none;
    const mcp::PrincipalLimits& own = call.principal ? call.principal->limits : none;
    // A human confirming a destructive call gets 45 s on top of the call's limit (2025
    // revisions: the call waits for the answer; 2026-07-28 asks in a round of its own instead).
    // A call waiting for the store waits within its limit: the wait is part of the call.
    const uint64_t wall_ns = mcp::tightened_wall_ns(m_wall_limit_ns, own) + (confirms && !call.modern ? kConfirmNs : 0);
    job->deadline_ns = clock::monotonic_ns() + wall_ns;
    job->kill_at_ns = 0;
    job->wake = m_wake;
    job->output_limit = mcp::tightened_output(m_output_limit, own);
    job->memory_limit = mcp::tightened_memory(kToolHeapLimit, own);
    job->syscall_limit = mcp::tightened_syscalls(kToolSyscallLimit, own);

    // The token is bound to this call: principal, tool, arguments and a per-boot call number.
    job->principal_id = call.principal ? call.principal->id : 0;
    uint64_t n;
    {
        arch::IrqGuard guard; // two bridges number their calls from one counter
        n = ++g_calls;
    }
    job->call.token_id = n; // the audit trail names the token by its call number
    if (!source)
        return true; // Waiting: poll() goes on
    if (!spawn(*job, *source, transient, err)) {
        release_call(*job);
        return false;
    }
    return true;
}

// Starts the call's task and issues its token from `source` (transient: made for this call, the
// job owns it from here; deleted if the call cannot start). False + err: no task could be started
// (the job is left for the caller to release).
bool Executor::spawn(Job& job, uint32_t source, bool transient, mcp::ToolError& err) {
    const std::string_view text(job.args, job.args_len);
    const uint64_t binding = call_binding(job.principal_id, job.call.tool, text, job.call.token_id,
                                          job.call.provenance_id);
    char name[24] = "tool:";
    for (size_t i = 5, k = 0; i + 1 < sizeof name && job.call.tool[k]; ++i, ++k)
        name[i] = job.call.tool[k];
    const uint64_t now = clock::monotonic_ns();
    const uint64_t wall_ns = job.deadline_ns > now ? job.deadline_ns - now : 1;
    job.state = Job::State::Running;
    int64_t task = sys::task_create(m_caps.factory, &tool_task_main, &job, kToolPriority, name);
    if (task < 0) {
        if (transient)
            sys::cap_delete(source);
        KLOG_WARN("mcp: no tool task for '%s': %s", job.call.tool, ktl::error_name(static_cast<ktl::Error>(-task)));
        err = { mcp::ErrorCode::InternalError, "no tool task could be started" };
        return false;
    }
    job.task = static_cast<uint32_t>(task);
    sys::task_limit(job.task, job.memory_limit, job.syscall_limit);
    // Exactly the rights this tool needs, never the Grant the bridge holds; derived from the
    // bridge's capability (revoking it reaches the token) and dead at the wall-time limit.
    int64_t token = sys::token_issue(source, job.task, job.def->rights, binding, wall_ns);
    job.token = token >= 0 ? static_cast<uint32_t>(token) : ~0u; // the task fails closed without it
    // A capability made for this call lives as long as the call (the token hangs from it).
    job.source = source;
    job.source_transient = transient && token >= 0;
    if (transient && token < 0)
        sys::cap_delete(source);
    // profile=faults only: proves the binding is checked
    tamper_if_asked(*job.def, job.args, job.args_len, job.call.provenance_id, job.token);
    return true;
}

void Executor::cancel(std::string_view raw_id, bool id_is_string, uint32_t origin) {
    for (auto& j : std::span<Job>(m_jobs, m_slots))
        if ((j.state == Job::State::Running || j.state == Job::State::Waiting) &&
            j.call.matches(raw_id, id_is_string, origin)) {
            j.cancel = true;
            if (j.kill_at_ns == 0)
                j.kill_at_ns = clock::monotonic_ns() + kStopGraceNs;
        }
}

void Executor::respond(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error,
                       uint32_t origin) {
    for (auto& j : std::span<Job>(m_jobs, m_slots)) {
        mcp::ClientExchange* ex = __atomic_load_n(&j.exchange, __ATOMIC_ACQUIRE);
        if (j.state == Job::State::Running && ex && ex->accept(raw_id, id_is_string, origin, body, is_error))
            return;
    }
    KLOG_DEBUG("mcp: a response from a client matches no request of ours; dropped");
}

namespace {

// Collects an ended tool task (its join completes at once) and drops the bridge's handle and
// the call's buffers. One killed while blocked may not have ended yet: it is detached, so the
// kernel releases it when it does (no zombie), and its memory was never the call's buffers.
void reap(Job& job, uint64_t join_timeout_ns) {
    if (sys::task_join(job.task, join_timeout_ns) == -static_cast<int64_t>(ktl::Error::TimedOut))
        sys::task_detach(job.task);
    sys::cap_delete(job.task);
    // The capability made for this call (a collection's) goes now, with whatever was derived from
    // it: the token or the capability it became.
    if (job.source_transient)
        sys::cap_delete(job.source);
    job.source_transient = false;
    release_buffers(job);
}

// Gives the tool task the request slot it asked for (ToolContext::exchange).
void lend_exchange(Job& job) {
    if (!job.exchange_wanted || __atomic_load_n(&job.exchange, __ATOMIC_ACQUIRE) || job.exchange_refused)
        return;
    auto mem = kheap::alloc(sizeof(mcp::ClientExchange));
    if (!mem) {
        job.exchange_refused = true;
        return;
    }
    __atomic_store_n(&job.exchange, new (*mem) mcp::ClientExchange, __ATOMIC_RELEASE);
}

// "srv-<n>": the ids of the bridge's requests to clients (strings, so never a client's own
// numeric ids; unique per bridge for the boot).
size_t request_id(uint64_t n, char (&out)[mcp::ClientExchange::kMaxId]) {
    char digits[20];
    size_t d = 0;
    do
        digits[d++] = char('0' + n % 10);
    while ((n /= 10) != 0 && d < sizeof digits);
    constexpr std::string_view kPrefix = "srv-";
    size_t len = 0;
    for (char c : kPrefix)
        out[len++] = c;
    while (d > 0)
        out[len++] = digits[--d];
    return len;
}

// Sends the call's queued log records (dropped once it is answered or cancelled).
template <typename Send>
void flush_logs(mcp::Server& server, Job& job, std::span<char> out, Send&& send) {
    for (uint32_t head = __atomic_load_n(&job.log_head, __ATOMIC_ACQUIRE); job.log_tail != head;) {
        const Job::LogSlot& slot = job.logs[job.log_tail % Job::kLogSlots];
        size_t n = job.answered || job.cancel ? 0 : server.call_log(job.call, slot.level, slot.text, out);
        if (n > 0)
            send(job, n, false);
        __atomic_store_n(&job.log_tail, job.log_tail + 1, __ATOMIC_RELEASE);
    }
}

} // namespace

void Executor::poll(mcp::Server& server, std::span<char> out, Send send_to, void* ctx) {
    uint64_t now = clock::monotonic_ns();
    auto send = [&](const Job& j, size_t n, bool final) {
        if (n == 0 && !final)
            return;
        if (!final || n == 0) {
            send_to(ctx, j.call, n, final);
            return;
        }
        // An answer: the transport's part of it and the whole call (CallStages).
        const uint64_t sending = clock::monotonic_ns();
        send_to(ctx, j.call, n, final);
        const uint64_t sent = clock::monotonic_ns();
        server.stages().add_since(mcp::CallStages::Send, sending, sent);
        if (j.call.received_ns)
            server.stages().add_since(mcp::CallStages::Call, j.call.received_ns, sent);
    };
    Recovery store {};
    bool store_asked = false; // asked once per poll, for every call that waits for the store
    for (auto& j : std::span<Job>(m_jobs, m_slots)) {
        if (j.state == Job::State::Free)
            continue;
        if (j.state == Job::State::Waiting) {
            if (!store_asked)
                store = recovery(m_caps);
            store_asked = true;
            if (j.cancel) { // cancelled while it waited: released and audited, never answered (MCP "Cancellation")
                send(j, server.finish_call(j.call, false, {}, {}, true, out), true);
                release_call(j);
                continue;
            }
            if (store.ongoing && now < j.deadline_ns) {
                // The client asked for progress: how far recovery is, at once and then as it goes on
                // (a notification's progress must grow, so only a larger count is sent).
                const bool first = j.wait_reported_ns == 0;
                if (first || (now - j.wait_reported_ns >= kRecoveryProgressNs && store.replayed > j.done)) {
                    j.wait_reported_ns = now;
                    j.done = store.replayed;
                    send(j,
                         server.progress(j.call, store.replayed, 0,
                                         "waiting for the store: logged changes replayed so far", out),
                         false);
                }
                continue;
            }
            mcp::ToolError err;
            if (!store.ongoing) {
                // The store is back: the call starts as it would have had it come now.
                bool transient = false;
                auto doc = json::Document::parse({ j.args, j.args_len }, { j.nodes, j.node_count });
                auto source = doc ? token_source(m_caps, *j.def, doc->root(), &transient)
                                  : ktl::Result<uint32_t>(ktl::Error::InvalidArgs);
                if (source && spawn(j, *source, transient, err))
                    continue;
                if (!source)
                    err = source_error(source.error());
            } else {
                err = still_recovering(store.replayed);
            }
            send(j, server.finish_call(j.call, false, {}, err, false, out), true);
            release_call(j);
            continue;
        }
        flush_logs(server, j, out, send); // what a call logged goes out before its progress and result
        // Asked before the state is read: a task that finished sets Done before it ends.
        bool ended = sys::task_status(j.task) == 1;
        if (j.state != Job::State::Done && ended) {
            // It ended without finishing: a fault (or a kill from elsewhere). Answered now, not at
            // the wall-time limit; the kernel has already taken back what the task held.
            KLOG_WARN("mcp: tool task for '%s' ended without finishing (a fault)", j.call.tool);
            reap(j, 1'000'000);
            if (!j.answered)
                send(j,
                     server.finish_call(j.call, false, {},
                                        { mcp::ErrorCode::InternalError, "the tool task faulted and was ended",
                                          "tool_fault" },
                                        j.cancel, out),
                     true);
            j.state = Job::State::Free;
            continue;
        }
        lend_exchange(j);
        if (j.state == Job::State::Done) {
            mcp::InputRound* round = j.round; // kept past reap(), which frees the call's buffers
            j.round = nullptr;
            reap(j, 1'000'000'000);
            if (!j.answered && !j.cancel && j.progress_seq != j.progress_sent) {
                __atomic_store_n(&j.progress_sent, j.progress_seq, __ATOMIC_RELEASE);
                send(j, server.progress(j.call, j.done, j.total, j.message, out), false);
            }
            if (!j.answered && !j.cancel && round && round->pending()) {
                // It asked for input (2026-07-28): this round ends with the requests.
                send(j, server.input_required(j.call, round->requests(), round->used(), round->used_fits(), out), true);
            } else if (!j.answered) {
                if (j.task_start_ns)
                    server.stages().add_since(mcp::CallStages::Body, j.task_start_ns, j.task_end_ns);
                bool stopped_late = j.ok && now >= j.deadline_ns;
                mcp::ToolError err = stopped_late ? mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded,
                                                                     "the tool ran past its wall-time limit" }
                                                  : j.err;
                send(j, server.finish_call(j.call, j.ok && !stopped_late, { j.out, j.out_len }, err, j.cancel, out),
                     true);
            }
            if (round)
                kheap::free(round);
            j.state = Job::State::Free;
            continue;
        }
        if (j.kill_at_ns != 0 && now >= j.kill_at_ns) {
            // Told to stop and still running: end the task. A blocked one dies when its wait
            // ends (the kernel may still be filling its buffers); try again next time.
            int64_t dead = sys::task_kill(j.task);
            if (dead == 1 || dead < 0) {
                KLOG_NOTICE("mcp: tool task for '%s' killed: it did not stop %llu ms after being told to", j.call.tool,
                            static_cast<unsigned long long>(kStopGraceNs / 1000000));
                reap(j, 1'000'000);
                if (!j.answered) // cancelled: released and audited, never answered (MCP "Cancellation")
                    send(j, server.finish_call(j.call, false, {}, {}, true, out), true);
                j.state = Job::State::Free;
            }
            continue;
        }
        if (!j.answered && now >= j.deadline_ns) {
            // Answer now; the task is told to stop (tools check should_stop()) and killed if it
            // has not ended after the grace period.
            j.answered = true;
            j.cancel = true;
            j.kill_at_ns = now + kStopGraceNs;
            send(j,
                 server.finish_call(j.call, false, {},
                                    { mcp::ErrorCode::LimitTimeExceeded, "the tool ran past its wall-time limit" },
                                    false, out),
                 true);
            continue;
        }
        uint64_t seq = j.progress_seq;
        if (!j.answered && !j.cancel && seq != j.progress_sent) {
            __atomic_store_n(&j.progress_sent, seq, __ATOMIC_RELEASE);
            send(j, server.progress(j.call, j.done, j.total, j.message, out), false);
        }
        // A request the tool queued (it withdraws it itself once told to stop).
        mcp::ClientExchange* ex = __atomic_load_n(&j.exchange, __ATOMIC_ACQUIRE);
        if (ex && !j.answered && !j.cancel && ex->state() == mcp::ClientExchange::State::Queued) {
            char id[mcp::ClientExchange::kMaxId];
            std::string_view sid(id, request_id(++m_requests, id));
            size_t n = mcp::Server::client_request(sid, ex->method(), ex->params(), out);
            if (n == 0) {
                ex->unsent();
                continue;
            }
            ex->sent(sid, j.call.origin);
            send(j, n, false);
        }
    }
}

} // namespace mcpd

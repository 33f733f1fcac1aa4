// The executor's bridge side: starting a call (step-up, proposals, buffers, token), cancelling it,
// and routing a client's response to it. Its polling is tool_exec_poll.cpp, the tool task's side
// tool_task.cpp and tool_context.cpp.
#include "tool_job.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../log.h"
#include "../mm/kheap.h"
#include <abi/sys.h>
#include "bridge_config.h"
#include "provenance_log.h"
#include "tools/fault/tamper.h"

#include <ktl/format.h>

#include <new>

namespace mcpd {

namespace {

uint64_t g_calls = 0; // per boot, across bridges (incremented with IRQs masked: see start())

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

bool Executor::in_flight() const {
    for (size_t i = 0; i < m_slots; ++i)
        if (m_jobs[i].state != Job::State::Free)
            return true;
    return false;
}

bool Executor::overdue(uint64_t now_ns, uint64_t ns) const {
    for (size_t i = 0; i < m_slots; ++i) {
        const Job& j = m_jobs[i];
        if ((j.state == Job::State::Waiting || j.state == Job::State::Running) && j.call.start_ns != 0 &&
            now_ns - j.call.start_ns > ns)
            return true;
    }
    return false;
}

int Executor::log_floor() const {
    int floor = -1;
    for (const auto& j : std::span<const Job>(m_jobs, m_slots))
        if (j.state != Job::State::Free && j.call.log_level >= 0 && (floor < 0 || j.call.log_level < floor))
            floor = j.call.log_level;
    return floor;
}

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
    bool transient = false, elsewhere = false;
    ktl::Result<uint32_t> source = ktl::Error::NotReady;
    if (!waits) {
        source = token_source(m_caps, def, arguments, &transient, &elsewhere);
        if (!source && source.error() != ktl::Error::NotReady) {
            err = source_error(source.error());
            return false;
        }
    }
    auto drop_source = [&] {
        if (source && transient)
            sys::cap_delete(*source);
    };
    if (!take_buffers(*job, arguments)) {
        drop_source();
        err = { mcp::ErrorCode::InternalError, "no memory for the call's arguments" };
        return false;
    }
    job->elsewhere = elsewhere;
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
    // A tool that changes the store: its writes return once staged, and this bridge syncs before it
    // answers (audit_decision), so one commit carries the change and its audit record.
    const bool changes = job.call.action && changes_store(job.call.action);
    sys::task_limit(job.task, job.memory_limit, job.syscall_limit,
                    changes ? uint64_t(abi::kTaskAckStaged) : uint64_t(0));
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

} // namespace mcpd

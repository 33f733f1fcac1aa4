#include "sink_gate.h"
#include "tool_exec.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../clock.h"

#include <abi/rights.h>
#include <abi/sys.h>
#include <crypto/sha256.h>
#include <ktl/format.h>
#include <ktl/utf8.h>

namespace mcpd {
namespace {

mcp::ProposalBook g_book; // shared by the bridges and the proposal tools' tasks: IRQs masked around it

// A step_up= list that names something else is ignored whole (bridge_config warns of it).
mcp::SinkRules make_rules() {
    mcp::SinkRules rules;
    if (!bootargs::get().step_up.empty())
        (void)rules.add_sinks(bootargs::get().step_up);
    rules.lower_delete_threshold(bootargs::get().step_up_delete_over);
    return rules;
}

// How many items an array argument has (0 when absent).
uint64_t items(const json::Value& v) { return v.is_array() ? v.size() : 0; }

void write_facts(json::Writer& w, const mcp::TargetFacts& f) {
    w.begin_object()
        .key("exists")
        .boolean(f.exists)
        .key("vectors")
        .number(f.count)
        .key("generation")
        .number(f.generation);
    w.end_object();
}

// with_arguments false: a summary (the list), whose size does not grow with the arguments'.
void write(json::Writer& w, const mcp::Proposal& p, bool with_arguments = true) {
    char node[mcp::kProvenanceIdText], decided[mcp::kProvenanceIdText];
    mcp::format_provenance_id(p.provenance, node);
    mcp::format_provenance_id(p.decided_provenance, decided);
    w.begin_object().key("id").number(uint64_t(p.id)).key("state").string(mcp::proposal_state_name(p.state));
    w.key("tool").string(p.tool).key("sink").string(mcp::sink_name(p.sink)).key("collection").string(p.target);
    w.key("ids").number(p.ids).key("target_when_proposed");
    write_facts(w, p.facts);
    if (with_arguments)
        w.key("arguments").raw(p.arguments());
    w.key("proposed_by").string(p.proposer_name).key("provenance_node_id").string(node);
    w.key("created_at").string(p.created_at);
    const uint64_t now = clock::monotonic_ns();
    w.key("expires_in_s")
        .number(p.state == mcp::ProposalState::Pending && p.expires_ns > now ? (p.expires_ns - now) / 1'000'000'000
                                                                             : 0);
    w.key("decided_by").string(p.decider_name).key("decided_provenance_node_id").string(decided).end_object();
}

// Why a proposal could not be decided, as the caller is told.
mcp::ToolError refusal_error(mcp::ProposalBook::Refusal refusal) {
    using R = mcp::ProposalBook::Refusal;
    const char* reason = mcp::refusal_reason(refusal);
    switch (refusal) {
    case R::Unknown: return { mcp::ErrorCode::NotFound, "no proposal with that id", reason };
    case R::OwnProposal:
        return { mcp::ErrorCode::AuthInsufficientRole, "the proposer cannot decide its own proposal", reason };
    case R::Stale:
        return { mcp::ErrorCode::ValidationFailed,
                 "the collection changed since the proposal; it will not run (propose it again)", reason };
    case R::Expired: return { mcp::ErrorCode::ValidationFailed, "the proposal expired", reason };
    case R::NotPending:
    case R::None: break;
    }
    return { mcp::ErrorCode::ValidationFailed, "the proposal was already decided", reason };
}

// The form: exactly what will be destroyed, with counts; the collection's name typed back.
void confirm_params(const StepUp& s, std::string_view tool, json::Writer& w) {
    char message[320];
    ktl::Formatter f(message, sizeof message);
    switch (s.sink) {
    case mcp::Sink::Drop:
        f.append("%.*s will destroy collection '%s' and the %llu vectors in it. This cannot be undone.",
                 static_cast<int>(tool.size()), tool.data(), s.target, static_cast<unsigned long long>(s.facts.count));
        break;
    case mcp::Sink::BulkDelete:
    case mcp::Sink::Delete:
        f.append("%.*s will delete up to %llu vectors from collection '%s' (it holds %llu). This cannot be undone.",
                 static_cast<int>(tool.size()), tool.data(), static_cast<unsigned long long>(s.ids), s.target,
                 static_cast<unsigned long long>(s.facts.count));
        break;
    default:
        f.append("%.*s will change collection '%s' (%s, %llu ids).", static_cast<int>(tool.size()), tool.data(),
                 s.target, mcp::sink_name(s.sink), static_cast<unsigned long long>(s.ids));
        break;
    }
    f.append(" Type the collection's name to confirm.");
    w.begin_object().key("message").string({ message, f.length() });
    w.key("requestedSchema").begin_object().key("type").string("object").key("properties").begin_object();
    w.key("name").begin_object().key("type").string("string").key("title").string("Collection name");
    w.key("description")
        .string("The name of the collection, exactly, to confirm")
        .key("maxLength")
        .number(uint64_t(64));
    w.end_object().end_object().key("required").begin_array().string("name").end_array().end_object().end_object();
}

} // namespace

const mcp::SinkRules& sink_rules() {
    static const mcp::SinkRules rules = make_rules();
    return rules;
}

StepUp classify(const ToolDef& def, const json::Value& args) {
    StepUp s;
    switch (def.effect.sink()) {
    case SinkClass::None: return s;
    case SinkClass::Drop: s.sink = mcp::Sink::Drop; break;
    case SinkClass::Create: s.sink = mcp::Sink::Create; break;
    case SinkClass::Write:
        s.ids = items(args.find("ids"));
        s.sink = mcp::Sink::Write;
        break;
    case SinkClass::DeleteByIds:
        s.ids = items(args.find("ids"));
        s.sink = sink_rules().delete_sink(s.ids);
        break;
    }
    // A sink class implies a descriptor with a target argument (tool_def.h checks it at compile time).
    ktl::utf8_copy(s.target, args.find(def.descriptor->target_key).plain_string().value_or(""));
    s.critical = sink_rules().critical_sink(s.sink);
    return s;
}

ktl::Result<mcp::TargetFacts> target_facts(uint32_t store, std::string_view name) {
    mcp::TargetFacts f;
    if (name.empty() || name.size() > abi::kMaxNameLength)
        return f;
    int64_t slot = sys::store_open(store, name.data(), name.size(), abi::kRead);
    if (slot == -static_cast<int64_t>(ktl::Error::NotFound))
        return f;
    if (slot < 0)
        return static_cast<ktl::Error>(-slot);
    abi::VectorStats st {};
    int64_t rc = sys::vec_stats(slot, &st);
    sys::cap_delete(slot);
    if (rc < 0)
        return static_cast<ktl::Error>(-rc);
    f.exists = true;
    f.serial = st.serial;
    f.count = st.count;
    f.generation = st.writes;
    return f;
}

void derive_confirm_key(StepUp& step, uint16_t principal_id, uint64_t args_hash) {
    static uint8_t secret[32];
    static bool drawn = false;
    if (!drawn) { // the bridges run on one core: the first to get here draws it
        drawn = sys::random_bytes(secret, sizeof secret) == int64_t(sizeof secret);
        if (!drawn)
            for (size_t i = 0; i < sizeof secret; ++i)
                secret[i] = static_cast<uint8_t>(clock::monotonic_ns() >> (i % 8));
        drawn = true;
    }
    crypto::Sha256 h;
    auto bytes = [&](const void* p, size_t n) { h.update(std::string_view(static_cast<const char*>(p), n)); };
    bytes(secret, sizeof secret);
    bytes(&principal_id, sizeof principal_id);
    bytes(&args_hash, sizeof args_hash);
    bytes(&step.facts.serial, sizeof step.facts.serial);
    bytes(&step.facts.generation, sizeof step.facts.generation);
    h.update(std::string_view(step.target));
    auto digest = h.finish();
    ktl::Formatter f(step.confirm_key, sizeof step.confirm_key);
    f.append("confirm_");
    for (int i = 0; i < 10; ++i)
        f.append("%02x", digest[i]);
}

void propose(const StepUp& step, std::string_view tool, std::string_view args, const mcp::PendingCall& call,
             mcp::ToolError& err) {
    char created[24] = "";
    clock::rfc3339_now(created, sizeof created);
    mcp::ProposalBook::Draft d;
    d.sink = step.sink;
    d.tool = tool;
    d.target = step.target;
    d.args = args;
    d.ids = step.ids;
    d.facts = step.facts;
    d.proposer = call.principal;
    d.provenance = call.provenance_id;
    d.now_ns = clock::monotonic_ns();
    d.created_at = created;
    ktl::Result<uint32_t> id = ktl::Error::InvalidArgs;
    {
        arch::IrqGuard guard;
        id = g_book.submit(d);
    }
    if (!id) {
        switch (id.error()) {
        case ktl::Error::Full:
            err = { mcp::ErrorCode::StepUpRequired,
                    "this needs a human's yes, and 16 proposals already await one; nothing ran", "proposals_full" };
            break;
        case ktl::Error::Exhausted:
            err = { mcp::ErrorCode::StepUpRequired,
                    "this needs a human's yes, and 4 of this caller's proposals already await one; nothing ran",
                    "too_many_proposals" };
            break;
        case ktl::Error::AccessDenied:
            err = {
                mcp::ErrorCode::StepUpRequired,
                "this needs a human's yes: from a client that can be asked (elicitation), or as a proposal by an identified caller (an API key); nothing ran",
                "anonymous_proposal"
            };
            break;
        default:
            err = {
                mcp::ErrorCode::StepUpRequired,
                "this needs a human's yes, and its arguments are over 20 KiB, too large to keep as a proposal; nothing ran",
                "proposal_too_large"
            };
            break;
        }
        return;
    }
    err = {
        mcp::ErrorCode::StepUpRequired,
        "this destroys data and came from a client that cannot be asked: it is now a proposal (details.proposal_id), "
        "which another administrator approves with proposal_approve (or rejects), or an operator at the appliance's "
        "console with 'proposal approve ID' (or 'proposal reject ID'); nothing ran",
        "proposal_pending", *id
    };
}

bool approve(uint32_t id, const mcp::PendingCall& call, uint32_t store, char (&tool)[32], char* args, size_t cap,
             size_t& args_len, StepUp& step, mcp::ToolError& err) {
    if (!call.principal) {
        err = { mcp::ErrorCode::AuthInsufficientRole, "an anonymous caller approves nothing", "anonymous" };
        return false;
    }
    char target[72] = "", proposed[32] = "";
    {
        arch::IrqGuard guard;
        const mcp::Proposal* p = g_book.find(id);
        if (p) {
            ktl::utf8_copy(target, p->target);
            ktl::utf8_copy(proposed, p->tool);
        }
    }
    // The approver must hold what the proposed call itself needs: a key narrowed to
    // proposal:approve approves nothing it could not do.
    for (const auto& t : all_tools())
        if (std::string_view(t.name) == proposed && (call.principal->scopes & t.scopes) != t.scopes) {
            err = { mcp::ErrorCode::AuthInsufficientRole, "the approver lacks a scope the proposed call needs",
                    "approver_lacks_scope" };
            return false;
        }
    // The target as it is now (outside the lock: a system call), compared under it. A target that
    // cannot be read now leaves the proposal pending.
    auto read = target_facts(store, target);
    if (!read) {
        err = { mcp::ErrorCode::InternalError, "the collection could not be checked; try again", "target_unreadable" };
        return false;
    }
    const mcp::TargetFacts now = *read;
    arch::IrqGuard guard;
    auto refusal = g_book.approve(id, *call.principal, call.provenance_id, now, clock::monotonic_ns());
    if (refusal != mcp::ProposalBook::Refusal::None) {
        err = refusal_error(refusal);
        return false;
    }
    const mcp::Proposal* p = g_book.find(id);
    if (p->args_len > cap) {
        err = { mcp::ErrorCode::InternalError, "the proposal's arguments do not fit" };
        return false;
    }
    ktl::utf8_copy(tool, p->tool);
    for (size_t i = 0; i < p->args_len; ++i)
        args[i] = p->args[i];
    args_len = p->args_len;
    step.sink = p->sink;
    step.critical = true;
    step.approved = true;
    ktl::utf8_copy(step.target, p->target);
    step.ids = p->ids;
    step.facts = now;
    step.proposed_at = p->provenance;
    return true;
}

void reopen_proposal(uint32_t id) {
    arch::IrqGuard guard;
    g_book.reopen(id);
}

bool reject(uint32_t id, const mcp::PendingCall& call, mcp::ToolError& err) {
    if (!call.principal) {
        err = { mcp::ErrorCode::AuthInsufficientRole, "an anonymous caller rejects nothing", "anonymous" };
        return false;
    }
    arch::IrqGuard guard;
    auto refusal = g_book.reject(id, *call.principal, call.provenance_id, clock::monotonic_ns());
    if (refusal == mcp::ProposalBook::Refusal::None)
        return true;
    err = refusal_error(refusal);
    return false;
}

size_t pending_proposals(ProposalLine* out, size_t cap) {
    arch::IrqGuard guard; // copies of at most 16: printed by the caller with interrupts on
    const uint64_t now = clock::monotonic_ns();
    g_book.expire(now);
    size_t n = 0;
    g_book.for_each([&](const mcp::Proposal& p) {
        if (p.state != mcp::ProposalState::Pending || n == cap)
            return;
        ProposalLine& l = out[n++];
        l.id = p.id;
        ktl::utf8_copy(l.tool, p.tool);
        ktl::utf8_copy(l.target, p.target);
        ktl::utf8_copy(l.proposer, p.proposer_name);
        l.ids = p.ids;
        l.vectors = p.facts.count;
        l.age_s = (now - p.created_ns) / 1'000'000'000;
        l.expires_in_s = p.expires_ns > now ? (p.expires_ns - now) / 1'000'000'000 : 0;
    });
    return n;
}

bool proposal_line(uint32_t id, ProposalLine& line, mcp::ProposalState& state) {
    arch::IrqGuard guard;
    const mcp::Proposal* p = g_book.find(id);
    if (!p)
        return false;
    line.id = p->id;
    ktl::utf8_copy(line.tool, p->tool);
    ktl::utf8_copy(line.target, p->target);
    ktl::utf8_copy(line.proposer, p->proposer_name);
    line.ids = p->ids;
    line.vectors = p->facts.count;
    state = p->state;
    return true;
}

void write_policy(json::Writer& w) {
    const mcp::SinkRules& rules = sink_rules();
    w.begin_object().key("critical_sinks").begin_array();
    for (auto sink : { mcp::Sink::Drop, mcp::Sink::BulkDelete, mcp::Sink::Delete, mcp::Sink::Write, mcp::Sink::Create })
        if (rules.critical_sink(sink))
            w.string(mcp::sink_name(sink));
    w.end_array().key("delete_over").number(uint64_t(rules.delete_over));
    uint64_t pending = 0;
    {
        arch::IrqGuard guard;
        g_book.expire(clock::monotonic_ns());
        g_book.for_each([&](const mcp::Proposal& p) { pending += p.state == mcp::ProposalState::Pending; });
    }
    w.key("proposals_pending").number(pending).end_object();
}

bool write_proposal(json::Writer& w, uint32_t id) {
    arch::IrqGuard guard; // a short, bounded write: one proposal
    g_book.expire(clock::monotonic_ns());
    const mcp::Proposal* p = g_book.find(id);
    if (p)
        write(w, *p);
    return p != nullptr;
}

void write_proposals(json::Writer& w) {
    arch::IrqGuard guard; // at most 16
    g_book.expire(clock::monotonic_ns());
    w.begin_array();
    g_book.for_each([&](const mcp::Proposal& p) { write(w, p, false); });
    w.end_array();
}

bool sink_gate(const StepUp& step, bool token_present, bool token_matches, const ToolContext& ctx,
               mcp::ToolError& err) {
    mcp::SinkCall c;
    c.token_present = token_present;
    c.token_matches = token_matches;
    c.integrity = mcp::Integrity::Untrusted; // everything a client sent
    c.sink = step.critical ? step.sink : mcp::Sink::None;
    c.approved = step.approved;
    const mcp::Decision d = mcp::decide(sink_rules(), c);
    if (d.verdict == mcp::Verdict::Allow)
        return true;
    if (d.verdict == mcp::Verdict::Block) {
        err = token_present
                  ? mcp::ToolError { mcp::ErrorCode::InternalError,
                                     "the execution token was refused; the tool did not run", "token_refused" }
                  : mcp::ToolError { mcp::ErrorCode::InternalError,
                                     "the call has no execution token; the tool did not run", "token_missing" };
        return false;
    }
    // STEP_UP: the human is asked (the bridge filed a proposal instead when it could not be).
    ClientAnswer answer;
    if (!ctx.request(
            step.confirm_key, "elicitation/create", [&](json::Writer& w) { confirm_params(step, ctx.tool(), w); },
            answer, err))
        return false; // could not ask, or (2026-07-28) asked: the call ends with the request
    const char* why = nullptr;
    if (answer.is_error)
        why = "elicitation_failed";
    else if (answer.value.find("action").string_equals("decline"))
        why = "declined";
    else if (!answer.value.find("action").string_equals("accept"))
        why = "cancelled";
    else if (!answer.value.find("content").find("name").string_equals(step.target))
        why = "name_mismatch";
    if (!why)
        return true;
    err = { mcp::ErrorCode::StepUpRefused,
            std::string_view(why) == "name_mismatch" ? "the name typed back is not the collection's; nothing ran"
                                                     : "the human did not confirm; nothing ran",
            why };
    return false;
}

} // namespace mcpd

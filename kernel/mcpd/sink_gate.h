#pragma once
// The sink policy (mcp/policy/sink_policy.h) applied to the kernel's tools. The bridge classifies
// each admitted call before starting it (what it would do, to which collection, in what state the
// collection is) and, for a call the policy holds back (STEP_UP) from a client that cannot be
// asked, files a proposal instead of running it. The tool task takes the final decision after
// redeeming its token, and for a held-back call asks the human (elicitation/create: a form that
// says what will be destroyed and asks for the collection's name to be typed back). Proposals
// (mcp/policy/proposal_book.h) are shared by the bridges.
#include <cstdint>
#include <string_view>

#include <json/json.h>
#include <mcp/policy/proposal_book.h>
#include <mcp/policy/sink_policy.h>
#include <mcp/server/server.h>

#include "tools/tool_def.h"

namespace mcpd {

struct ToolContext;

// What the bridge found out about a call's sink before starting it.
struct StepUp {
    mcp::Sink sink = mcp::Sink::None;
    bool critical = false;    // the rules make this sink critical
    bool approved = false;    // an administrator approved it as a proposal
    char target[72] = "";     // the collection
    uint64_t ids = 0;         // how many ids the call names
    mcp::TargetFacts facts;   // the collection as it is (filled for critical sinks)
    uint64_t proposed_at = 0; // approved proposals: the proposing request's provenance node
    // The key the confirmation is asked and answered under (2026-07-28 input rounds): derived from
    // a boot secret, the caller, the arguments and the collection's identity and generation, so an
    // answer sent before the question was asked, or kept from an earlier state of the collection,
    // answers nothing.
    char confirm_key[32] = "";
};

// The rules: the defaults, widened by `step_up=` and `step_up_delete_over=`.
const mcp::SinkRules& sink_rules();
// The sink a call of the tool `def` defines is, with `args`: None for tools without a sink class.
// The collection is the argument the tool's descriptor names as its target.
StepUp classify(const ToolDef& def, const json::Value& args);
// The collection `name` as the store has it, through the bridge's store capability: exists false
// when there is none; an error when it could not be read (busy, no capability slot).
ktl::Result<mcp::TargetFacts> target_facts(uint32_t store, std::string_view name);
// Fills step.confirm_key for a call of `principal_id` whose arguments hash to `args_hash`.
void derive_confirm_key(StepUp& step, uint16_t principal_id, uint64_t args_hash);

// Files the call as a proposal (the bridge, when the client cannot be asked); err says so.
void propose(const StepUp& step, std::string_view tool, std::string_view args, const mcp::PendingCall& call,
             mcp::ToolError& err);
// proposal_approve: the proposal's tool and arguments (copied into `args`, at most its size)
// once approved (the target re-checked through `store`); false + err when refused.
bool approve(uint32_t id, const mcp::PendingCall& call, uint32_t store, char (&tool)[32], char* args, size_t cap,
             size_t& args_len, StepUp& step, mcp::ToolError& err);
// An approved proposal whose call could not be started: pending again.
void reopen_proposal(uint32_t id);
// proposal_reject: false + err when refused.
bool reject(uint32_t id, const mcp::PendingCall& call, mcp::ToolError& err);
// Writes proposal `id` (false: unknown) or every proposal, for the proposal tools.
bool write_proposal(json::Writer& w, uint32_t id);
void write_proposals(json::Writer& w);
// A proposal as the console shows it (a copy: printed outside the book's lock).
struct ProposalLine {
    uint32_t id = 0;
    char tool[32] = "";
    char target[72] = "";
    char proposer[mcp::Principal::kNameMax + 1] = "";
    uint64_t ids = 0;
    uint64_t vectors = 0; // the target's when proposed
    uint64_t age_s = 0;
    uint64_t expires_in_s = 0;
};
// The pending proposals, oldest slot first: how many were copied into out (at most cap).
size_t pending_proposals(ProposalLine* out, size_t cap);
// Proposal `id` and its state (false: unknown).
bool proposal_line(uint32_t id, ProposalLine& line, mcp::ProposalState& state);
// The policy in force (kernel://status): critical sinks, the bulk-delete threshold, pending proposals.
void write_policy(json::Writer& w);

// In the tool task, after its token was redeemed (or not): the decision. True: run the body.
// STEP_UP asks the human; without a yes, false + err (nothing ran).
bool sink_gate(const StepUp& step, bool token_present, bool token_matches, const ToolContext& ctx, mcp::ToolError& err);

} // namespace mcpd

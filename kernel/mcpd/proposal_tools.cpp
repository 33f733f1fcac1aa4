#include "proposal_tools.h"
#include "sink_gate.h"
#include "tool_exec.h"

#include "../cap/kcap.h"

#include <mcp/policy/roles.h>

namespace mcpd {
namespace {

const char* kIdIn = R"({"type":"object","properties":{"proposal_id":{"type":"integer","minimum":1,"maximum":4294967295}},)"
                    R"("required":["proposal_id"],"additionalProperties":false})";
const char* kNoArgs = R"({"type":"object","properties":{},"additionalProperties":false})";
#define PROPOSAL_SCHEMA                                                                                                         \
    R"({"type":"object","properties":{"id":{"type":"integer"},"state":{"type":"string","enum":["pending","approved","rejected","expired","stale"]},)" \
    R"("tool":{"type":"string"},"sink":{"type":"string"},"collection":{"type":"string"},"ids":{"type":"integer"},)"              \
    R"("target_when_proposed":{"type":"object"},"arguments":{"type":"object"},"proposed_by":{"type":"string"},)"                  \
    R"("provenance_node_id":{"type":"string"},"created_at":{"type":"string"},"expires_in_s":{"type":"integer"},)"                \
    R"("decided_by":{"type":"string"},"decided_provenance_node_id":{"type":"string"}}})"
const char* kListOut = R"({"type":"object","properties":{"proposals":{"type":"array","items":)" PROPOSAL_SCHEMA R"(}},"required":["proposals"]})";
const char* kOneOut = PROPOSAL_SCHEMA;
#undef PROPOSAL_SCHEMA
// What the approved call answers (its own result: the proposal's tool's output).
const char* kApproveOut = R"({"type":"object","description":"the result of the proposal's call, as that tool answers"})";

bool list(const json::Value&, json::Writer& w, mcp::ToolError&, const ToolContext&) {
    w.begin_object().key("proposals");
    write_proposals(w);
    w.end_object();
    return true;
}

// proposal_get, and proposal_reject once the bridge has rejected it: the proposal as it stands.
bool get(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext&) {
    auto id = args.find("proposal_id").as_uint64().value_or(0);
    if (id == 0 || id > 0xffffffffull || !write_proposal(w, static_cast<uint32_t>(id))) {
        err = { mcp::ErrorCode::NotFound, "no proposal with that id", "unknown_proposal" };
        return false;
    }
    return true;
}

// Never runs: the bridge starts the proposal's own tool body in its place.
bool approve_placeholder(const json::Value&, json::Writer&, mcp::ToolError& err, const ToolContext&) {
    err = { mcp::ErrorCode::InternalError, "proposal_approve runs its proposal's call" };
    return false;
}

constexpr ToolImpl kImpls[] = {
    { "proposal_list", list, Grant::Nothing, kcap::kRead },
    { "proposal_get", get, Grant::Nothing, kcap::kRead },
    { "proposal_approve", approve_placeholder, Grant::Nothing, kcap::kRead },
    { "proposal_reject", get, Grant::Nothing, kcap::kRead },
};

const mcp::Tool kTools[] = {
    { "proposal_list", "List proposals",
      "Calls held back by the sink policy (destructive calls from clients that could not be asked) with their exact "
      "arguments, who proposed them, their state and time left.",
      kNoArgs, kListOut, mcp::kVectorRead, nullptr },
    { "proposal_get", "Get a proposal", "One proposal: its call, its target as it was when proposed, its state.", kIdIn,
      kOneOut, mcp::kVectorRead, nullptr },
    { "proposal_approve", "Approve a proposal",
      "Runs a pending proposal's call, exactly as proposed, if its target is unchanged since; only another administrator "
      "than its proposer may. Answers with that call's result.",
      kIdIn, kApproveOut, mcp::kProposalApprove, nullptr, mcp::ToolResult::Structured, 0, "approve", nullptr },
    { "proposal_reject", "Reject a proposal", "Rejects a pending proposal: it will never run. Not by its proposer.", kIdIn,
      kOneOut, mcp::kProposalApprove, nullptr, mcp::ToolResult::Structured, 0, "reject", nullptr },
};

} // namespace

std::span<const mcp::Tool> proposal_tools() { return kTools; }
std::span<const ToolImpl> proposal_tool_impls() { return kImpls; }

} // namespace mcpd

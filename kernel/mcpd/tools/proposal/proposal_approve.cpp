// proposal_approve: the bridge runs the approved proposal's own call in its place (Flow::
// ApproveProposal), with that call's ToolDef, grant and effect; its answer is that call's.
#include "proposal_family.h"
#include <abi/rights.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

// What the approved call answers (its own result: the proposal's tool's output).
constexpr const char* kApproveOut =
    R"({"type":"object","description":"the result of the proposal's call, as that tool answers"})";

// Never runs: the bridge starts the proposal's own tool body in its place.
bool approve_placeholder(const json::Value&, json::Writer&, mcp::ToolError& err, const ToolContext&) {
    err = { mcp::ErrorCode::InternalError, "proposal_approve runs its proposal's call" };
    return false;
}

constexpr mcp::Tool kTool = {
    "proposal_approve",
    "Approve a proposal",
    "Runs a pending proposal's call, exactly as proposed, if its target is unchanged since; only another administrator "
    "than its proposer may. Answers with that call's result.",
    kProposalIdIn,
    kApproveOut,
    mcp::kProposalApprove,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "approve",
    nullptr
};

} // namespace

MCPD_TOOL(proposal_approve) { kTool,      approve_placeholder, Grant::Nothing,
                              abi::kRead, Effect::read_only(), Flow::ApproveProposal };

} // namespace mcpd::tools

// proposal_reject: the bridge rejects the proposal before the call's task starts (Flow::
// RejectProposal); the body then reports the proposal as it stands.
#include "proposal_family.h"
#include <abi/rights.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr mcp::Tool kTool = { "proposal_reject",
                              "Reject a proposal",
                              "Rejects a pending proposal: it will never run. Not by its proposer.",
                              kProposalIdIn,
                              kProposalOut,
                              mcp::kProposalApprove,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "reject",
                              nullptr };

} // namespace

MCPD_TOOL(proposal_reject) { kTool,      write_one_proposal,  Grant::Nothing,
                             abi::kRead, Effect::read_only(), Flow::RejectProposal };

} // namespace mcpd::tools

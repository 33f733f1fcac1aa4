// proposal_get: one proposal, its call, its target as it was when proposed, its state.
#include "proposal_family.h"
#include <abi/rights.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr mcp::Tool kTool = {
    "proposal_get", "Get a proposal", "One proposal: its call, its target as it was when proposed, its state.",
    kProposalIdIn,  kProposalOut,     mcp::kVectorRead,
    nullptr
};

} // namespace

MCPD_TOOL(proposal_get) { kTool, write_one_proposal, Grant::Nothing, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

#pragma once
// Proposals as MCP tools: proposal_list and proposal_get (vector:read: whoever may read the store
// sees what is proposed to be done to it), proposal_approve and proposal_reject (proposal:approve,
// admin only; never the proposer's own). Approving runs the proposal's exact call, with the
// capability that call needs, in the approving call's task (tool_exec.cpp): its answer is that
// call's answer.
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

struct ToolImpl;

std::span<const mcp::Tool> proposal_tools();
std::span<const ToolImpl> proposal_tool_impls();

} // namespace mcpd

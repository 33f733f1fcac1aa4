#pragma once
// Proposals as MCP tools: proposal_list and proposal_get (vector:read: whoever may read the store
// sees what is proposed to be done to it), proposal_approve and proposal_reject (proposal:approve,
// admin only; never the proposer's own). Approving runs the proposal's exact call, with the
// capability that call needs, in the approving call's task (tool_exec.cpp): its answer is that
// call's answer. None of them holds any authority itself (Grant::Nothing): the bridge decides.
#include "../tool_def.h"
#include "../../tool_exec.h"

namespace mcpd::tools {

constexpr const char* kProposalIdIn =
    R"({"type":"object","properties":{"proposal_id":{"type":"integer","minimum":1,"maximum":4294967295}},)"
    R"("required":["proposal_id"],"additionalProperties":false})";
#define PROPOSAL_SCHEMA \
    R"({"type":"object","properties":{"id":{"type":"integer"},"state":{"type":"string","enum":["pending","approved","rejected","expired","stale"]},)" \
    R"("tool":{"type":"string"},"sink":{"type":"string"},"collection":{"type":"string"},"ids":{"type":"integer"},)" \
    R"("target_when_proposed":{"type":"object"},"arguments":{"type":"object"},"proposed_by":{"type":"string"},)" \
    R"("provenance_node_id":{"type":"string"},"created_at":{"type":"string"},"expires_in_s":{"type":"integer"},)" \
    R"("decided_by":{"type":"string"},"decided_provenance_node_id":{"type":"string"}}})"
constexpr const char* kProposalOut = PROPOSAL_SCHEMA;

// proposal_get, and proposal_reject once the bridge has rejected it: the proposal as it stands.
bool write_one_proposal(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext&);

} // namespace mcpd::tools

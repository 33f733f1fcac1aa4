// proposal_list: every call held back by the sink policy, with its state.
#include "proposal_family.h"
#include "../schemas.h"
#include "../../sink_gate.h"
#include <abi/rights.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kListOut =
    R"({"type":"object","properties":{"proposals":{"type":"array","items":)" PROPOSAL_SCHEMA
    R"(}},"required":["proposals"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError&, const ToolContext&) {
    w.begin_object().key("proposals");
    write_proposals(w);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "proposal_list",
    "List proposals",
    "Calls held back by the sink policy (destructive calls from clients that could not be asked) with their exact "
    "arguments, who proposed them, their state and time left.",
    kNoArgs,
    kListOut,
    mcp::kVectorRead,
    nullptr
};

} // namespace

MCPD_TOOL(proposal_list) { kTool, run, Grant::Nothing, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

#include "proposal_family.h"
#include "../../sink_gate.h"

namespace mcpd::tools {

bool write_one_proposal(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext&) {
    auto id = args.find("proposal_id").as_uint64().value_or(0);
    if (id == 0 || id > 0xffffffffull || !write_proposal(w, static_cast<uint32_t>(id))) {
        err = { mcp::ErrorCode::NotFound, "no proposal with that id", "unknown_proposal" };
        return false;
    }
    return true;
}

} // namespace mcpd::tools

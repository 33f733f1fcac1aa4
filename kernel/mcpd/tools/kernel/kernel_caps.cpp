// kernel_caps: the capability table of the task running the call.
// Reads through the introspection object its token granted (read), nothing else.
#include "../schemas.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>
#include <cap/rights.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kCapsOut =
    R"({"type":"object","properties":{"task":{"type":"string"},"capabilities":{"type":"array","items":{"type":"object",)"
    R"("properties":{"slot":{"type":"integer"},"type":{"type":"string"},"rights":{"type":"array"},)"
    R"("object_id":{"type":"integer"},"badge":{"type":"integer"}}}}},"required":["capabilities"]})";

// The capability table of the task running this very call: what a tool can reach.
bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    abi::CapInfo caps[64]; // this call's own: tool tasks run side by side
    int64_t n = sys::cap_list(ctx.cap, caps, 64);
    if (n < 0) {
        err = { mcp::ErrorCode::InternalError, "capability table unavailable" };
        return false;
    }
    w.begin_object().key("task").string("tool:kernel_caps").key("capabilities").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        const auto& c = caps[i];
        w.begin_object().key("slot").number(c.slot);
        w.key("type").string(cap::type_name(static_cast<cap::ObjectType>(c.type)));
        w.key("rights").begin_array();
        for (uint32_t b = 0; b < cap::kRightCount; ++b)
            if (c.rights & (1u << b))
                w.string(cap::kRightNames[b]);
        w.end_array();
        w.key("object_id").number(c.object_id).key("badge").number(c.badge).end_object();
    }
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = { "kernel_caps",
                              "Capabilities of a tool task",
                              "The capability table of the task running this call: what one tool call can reach.",
                              kNoArgs,
                              kCapsOut,
                              mcp::kKernelRead,
                              nullptr };

} // namespace

MCPD_TOOL(kernel_caps) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

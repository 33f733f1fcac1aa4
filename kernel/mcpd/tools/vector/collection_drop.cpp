// collection_drop: destroys a collection and everything in it. Its token grants the store, drop
// only; the sink policy steps it up (Sink::Drop, critical by default).
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kNameIn = R"({"type":"object","properties":{"name":)" NAME_SCHEMA
                                R"(},"required":["name"],"additionalProperties":false})";
constexpr const char* kDropOut =
    R"({"type":"object","properties":{"dropped":{"type":"string"}},"required":["dropped"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("name").plain_string();
    if (!name) {
        err = { mcp::ErrorCode::ValidationFailed, "not a valid collection name", "invalid_name" };
        return false;
    }
    int64_t rc = store_call_retrying([&] { return sys::store_drop(ctx.cap, name->data(), name->size()); });
    if (rc < 0) {
        err = rc == -static_cast<int64_t>(ktl::Error::NotFound)
                  ? mcp::ToolError { mcp::ErrorCode::NotFound, "no collection of that name", "missing_collection" }
                  : vec::error_of(rc);
        return false;
    }
    w.begin_object().key("dropped").string(*name).end_object();
    return true;
}

constexpr mcp::Tool kTool = { "collection_drop",
                              "Drop a vector collection",
                              "Destroys a collection and everything in it (refused while it is busy).",
                              kNameIn,
                              kDropOut,
                              mcp::kVectorAdmin,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "drop",
                              "name" };

} // namespace

MCPD_TOOL(collection_drop) { kTool, run, Grant::Store, abi::kDrop, Effect::drops() };

} // namespace mcpd::tools

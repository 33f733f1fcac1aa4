// vector_delete: deletes ids, through the one collection capability the call's token granted
// (write only). The sink policy steps up a bulk delete (over the rules' threshold) by default.
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kDeleteIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                                  R"("ids":{"type":"array","minItems":1,"maxItems":1024,"items":)" ID_SCHEMA R"(}},)"
                                  R"("required":["collection","ids"],"additionalProperties":false})";
constexpr const char* kDeleteOut =
    R"({"type":"object","properties":{"deleted":{"type":"integer"},"missing":{"type":"array","items":{"type":"integer"}}},)"
    R"("required":["deleted","missing"]})";


bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    constexpr size_t kMaxIds = 1024;
    Scratch mem(kMaxIds * sizeof(uint64_t) + kMaxIds);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the ids" };
        return false;
    }
    auto* ids = mem.as<uint64_t>();
    auto* missing = mem.as<bool>(kMaxIds * sizeof(uint64_t));
    size_t n = 0;
    if (!read_ids(args.find("ids"), ids, kMaxIds, n)) {
        err = { mcp::ErrorCode::ValidationFailed, "ids: 1..1,024 integer ids", "invalid_ids" };
        return false;
    }
    // All the ids as one change: searches never see some gone and others not, and a durable
    // collection logs them as one record (after a power cut, all are deleted or none).
    int64_t rc = sys::vec_delete(ctx.cap, reinterpret_cast<uint64_t>(ids), n, missing);
    if (rc < 0) {
        err = error_of(rc);
        return false;
    }
    const uint64_t deleted = static_cast<uint64_t>(rc);
    w.begin_object().key("deleted").number(deleted).key("missing").begin_array();
    for (size_t i = 0; i < n; ++i)
        if (missing[i])
            w.number(ids[i]);
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = { "vector_delete",
                              "Delete vectors by id",
                              "Deletes ids; they are never returned by a search afterwards.",
                              kDeleteIn,
                              kDeleteOut,
                              mcp::kVectorWrite,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "delete",
                              "collection" };

} // namespace

MCPD_TOOL(vector_delete) { kTool, run, Grant::Collection, abi::kWrite, Effect::deletes_ids() };

} // namespace mcpd::tools

// collection_list: every collection with its parameters and live count. Its token grants the
// store, read only.
#include "vector_family.h"
#include "../schemas.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kListOut =
    R"({"type":"object","properties":{"collections":{"type":"array","items":{"type":"object","properties":{)"
    R"("name":{"type":"string"},"dim":{"type":"integer"},"metric":{"type":"string"},"m":{"type":"integer"},)"
    R"("ef_construction":{"type":"integer"},"max_elements":{"type":"integer"},"count":{"type":"integer"},)"
    R"("bytes_budget":{"type":"integer"},"durability":{"type":"string","enum":["disk","memory"]},)"
    R"("replicated":{"type":"boolean","description":"one of the cluster's replicated collections"},)"
    R"("kind":{"type":"string","enum":["vectors","documents"],"description":"documents: count and max_elements are documents, dim the embedder's, 0 meaning lexical search only"}}}}},"required":["collections"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vec::Scratch mem(sizeof(abi::StoreEntry) * abi::kMaxNamed);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the list" };
        return false;
    }
    auto* rows = mem.as<abi::StoreEntry>();
    int64_t n = sys::store_list(ctx.cap, rows, abi::kMaxNamed);
    if (n < 0) {
        err = vec::error_of(n);
        return false;
    }
    w.begin_object().key("collections").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        const auto& r = rows[i];
        w.begin_object().key("name").string(r.name).key("dim").number(r.dim).key("metric").string(
            vec::metric_name(r.metric));
        w.key("m")
            .number(r.m)
            .key("ef_construction")
            .number(r.ef_construction)
            .key("max_elements")
            .number(r.max_elements);
        w.key("count").number(r.count).key("bytes_budget").number(r.bytes_budget);
        w.key("durability").string(r.durable ? "disk" : "memory").key("replicated").boolean(r.replicated != 0);
        w.key("kind").string(r.documents ? "documents" : "vectors").end_object();
    }
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = { "collection_list",
                              "List collections",
                              "Every collection (vectors or documents) with its parameters and live count.",
                              kNoArgs,
                              kListOut,
                              mcp::kVectorRead,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "read",
                              nullptr };

} // namespace

MCPD_TOOL(collection_list) { kTool, run, Grant::Store, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

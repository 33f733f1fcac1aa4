// collection_stats: one collection's counters. Its token grants that collection, read only.
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kCollectionIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA
                                      R"(},"required":["collection"],"additionalProperties":false})";
constexpr const char* kStatsOut =
    R"({"type":"object","properties":{"collection":{"type":"string"},"count":{"type":"integer"},"deleted":{"type":"integer"},)"
    R"("levels":{"type":"integer"},"bytes_used":{"type":"integer"},"bytes_budget":{"type":"integer"},)"
    R"("distance_computations":{"type":"integer"},"dim":{"type":"integer"},"metric":{"type":"string"},)"
    R"("unlinked":{"type":"integer"},"kind":{"type":"string","enum":["vectors","documents"]},)"
    R"("documents":{"type":"object","description":"kind documents: its texts and words","properties":{)"
    R"("max_documents":{"type":"integer"},"text_bytes":{"type":"integer"},"text_budget":{"type":"integer"},)"
    R"("terms":{"type":"integer"},"max_terms":{"type":"integer"},"postings":{"type":"integer"},"max_postings":{"type":"integer"},)"
    R"("semantic":{"type":"boolean"}}},)" SERVED_BY_SCHEMA R"(},)"
    R"("required":["count","deleted","levels","bytes_used","distance_computations","unlinked"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    abi::VectorStats st {};
    char served_by[32] = "";
    bool confirmed = false;
    if (ctx.elsewhere()) { // (a replicated collection this node holds no copy of: a voter's stats)
        Scratch mem(sizeof(abi::FedResult));
        if (!mem.ok()) {
            err = { mcp::ErrorCode::InternalError, "no memory for the answer" };
            return false;
        }
        auto* remote = mem.as<abi::FedResult>();
        abi::FedQuery q {};
        q.op = abi::kFedStats;
        if (!read_elsewhere(args, q, nullptr, *remote, err, ctx))
            return false;
        __builtin_memcpy(&st, remote->payload, sizeof st);
        __builtin_memcpy(served_by, remote->nodes[0], sizeof served_by);
        confirmed = remote->confirmed != 0;
    } else if (int64_t rc = sys::vec_stats(ctx.cap, &st); rc < 0) {
        err = vec::error_of(rc);
        return false;
    }
    w.begin_object().key("collection").string(args.find("collection").plain_string().value_or(""));
    w.key("count").number(st.count).key("deleted").number(st.deleted).key("levels").number(st.levels);
    w.key("bytes_used").number(st.bytes_used).key("bytes_budget").number(st.bytes_budget);
    w.key("distance_computations").number(st.distance_computations).key("unlinked").number(st.unlinked);
    w.key("dim").number(st.dim).key("metric").string(vec::metric_name(st.metric));
    w.key("kind").string(st.kind == 1 ? "documents" : "vectors");
    if (st.kind == 1) {
        w.key("documents").begin_object().key("max_documents").number(st.max_documents);
        w.key("text_bytes").number(st.text_bytes).key("text_budget").number(st.text_budget);
        w.key("terms").number(st.terms).key("max_terms").number(st.max_terms);
        w.key("postings").number(st.postings).key("max_postings").number(st.max_postings);
        w.key("semantic").boolean(st.dim != 0).end_object();
    }
    if (served_by[0])
        write_served_by(w, confirmed, served_by);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "collection_stats",
    "Vector collection statistics",
    "Live and deleted vectors, graph levels, bytes used and budgeted, distance computations; unlinked: "
    "vectors recovery gave back that are found by scanning until the background "
    "work links them into the graph.",
    kCollectionIn,
    kStatsOut,
    mcp::kVectorRead,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "read",
    "collection"
};

} // namespace

MCPD_TOOL(collection_stats) { kTool, run, Grant::CollectionOrCluster, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

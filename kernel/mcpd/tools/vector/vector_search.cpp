// vector_search: the k nearest live vectors to a query, through the one collection capability the
// call's token granted (read only).
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <hnsw/params.h>
#include <mcp/policy/provenance.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kSearchIn =
    R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
    R"("vector":{"type":"array","minItems":1,"maxItems":4096,"items":)" COMPONENT_SCHEMA R"(},)"
    R"("k":{"type":"integer","minimum":1,"maximum":100,"description":"default 10"},)"
    R"("ef":{"type":"integer","minimum":1,"maximum":512,"description":"default 64, raised to k"},)"
    R"("filter_ids":{"type":"array","maxItems":1024,"items":)" ID_SCHEMA
    R"(,"description":"only these ids may be returned"},)"
    R"("with_provenance":{"type":"boolean","description":"each hit also names the provenance node of the write that stored it"},)"
    R"("consistency":)" CONSISTENCY_SCHEMA R"(,)"
    R"("scope":{"type":"string","enum":["local","cluster"],"description":"local (default): this node's collection; cluster: every live node's collection of that name (one replica of a replicated one), merged: each hit names its node"},)"
    R"("deadline_ms":{"type":"integer","minimum":50,"maximum":8000,"description":"scope cluster: how long answers are gathered (default 2000); nodes silent by then are listed in missing"}},)"
    R"("required":["collection","vector"],"additionalProperties":false})";
constexpr const char* kSearchOut =
    R"({"type":"object","properties":{"hits":{"type":"array","items":{"type":"object",)"
    R"("properties":{"id":{"type":"integer"},"distance":{"type":"number"},"provenance_node_id":{"type":"string"},"node":{"type":"string"}}}},"count":{"type":"integer"},)"
    R"("scope":{"type":"string"},"nodes":{"type":"array","items":{"type":"string"}},"missing":{"type":"array","items":{"type":"string"}},)"
    R"("partial":{"type":"boolean"},"without":{"type":"integer","description":"nodes that answered without such a collection, or with one of another dimension"},)"
    R"("consistency":{"type":"string","description":"a replicated collection's: linearizable, or local: this node's copy"},)" SERVED_BY_SCHEMA
    R"(},"required":["hits","count"]})";

constexpr uint32_t kMaxK = 100;
constexpr uint32_t kMaxFilter = 1024;
constexpr uint32_t kDefaultK = 10, kDefaultEf = 64;

// Ascending, duplicates removed (the kernel requires strictly ascending filter ids). Insertion
// sort: at most 1,024 ids.
size_t sort_unique(uint64_t* ids, size_t n) {
    for (size_t i = 1; i < n; ++i)
        for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; --j) {
            uint64_t t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i)
        if (kept == 0 || ids[kept - 1] != ids[i])
            ids[kept++] = ids[i];
    return kept;
}

// scope "cluster": the query left with the cluster task (fed_search), which asks every live node
// and merges what answers before the deadline (kernel/cluster/federation.h); polled here.
bool run_federated(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    if (args.find("filter_ids").valid() || args.find("with_provenance").valid() || args.find("consistency").valid()) {
        err = { mcp::ErrorCode::ValidationFailed,
                "scope \"cluster\" takes no filter_ids, with_provenance or consistency (each node answers from its "
                "own copy)",
                "unsupported_with_scope" };
        return false;
    }
    auto k = static_cast<uint32_t>(args.find("k").as_uint64().value_or(kDefaultK));
    auto ef = static_cast<uint32_t>(args.find("ef").as_uint64().value_or(kDefaultEf));
    const auto deadline_ms = static_cast<uint32_t>(args.find("deadline_ms").as_uint64().value_or(2000));
    auto name = args.find("collection").plain_string();
    json::Value row = args.find("vector");
    uint32_t dim = 0;
    for (json::Value v = row.first(); v.valid() && dim <= 4096; v = v.next_sibling())
        ++dim;
    if (!name || name->size() > abi::kMaxNameLength || k == 0 || k > kMaxK || dim == 0 || dim > 4096) {
        err = { mcp::ErrorCode::ValidationFailed, "collection, k 1..100 and a vector of 1..4096 numbers",
                "invalid_query" };
        return false;
    }
    Scratch mem(dim * sizeof(float) + sizeof(abi::FedResult));
    if (!mem.ok() || !read_row(row, mem.as<float>(), dim)) {
        err = mem.ok() ? mcp::ToolError { mcp::ErrorCode::ValidationFailed, "the vector's numbers", "invalid_query" }
                       : mcp::ToolError { mcp::ErrorCode::InternalError, "no memory for the query" };
        return false;
    }
    auto* result = mem.as<abi::FedResult>(dim * sizeof(float));
    abi::FedQuery q {};
    for (size_t i = 0; i < name->size(); ++i)
        q.name[i] = (*name)[i];
    q.dim = dim;
    q.k = k;
    q.ef = ef < k ? k : ef;
    q.deadline_ms = deadline_ms;
    q.vector = reinterpret_cast<uint64_t>(mem.as<float>());
    if (!fed_gather(ctx.cap, q, *result, err))
        return false;
    w.begin_object().key("scope").string("cluster").key("hits").begin_array();
    for (uint32_t i = 0; i < result->count && i < abi::kFedMaxK; ++i) {
        const abi::FedHit& h = result->hits[i];
        w.begin_object().key("id").number(h.id).key("distance").number(static_cast<double>(h.distance));
        w.key("node").string(h.node < result->answered && h.node < abi::kFedMaxNodes ? result->nodes[h.node] : "");
        w.end_object();
    }
    w.end_array().key("count").number(result->count).key("nodes").begin_array();
    for (uint32_t i = 0; i < result->answered && i < abi::kFedMaxNodes; ++i)
        w.string(result->nodes[i]);
    w.end_array().key("missing").begin_array();
    for (uint32_t i = 0; i < result->missing && i < abi::kFedMaxNodes; ++i)
        w.string(result->missing_nodes[i]);
    w.end_array().key("partial").boolean(result->partial != 0).key("without").number(result->without);
    w.end_object();
    return true;
}

// A replicated collection this node holds no copy of: one of its voters searches its copy (its
// filter and provenance there too).
bool run_elsewhere(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    const auto k = static_cast<uint32_t>(args.find("k").as_uint64().value_or(kDefaultK));
    const auto ef = static_cast<uint32_t>(args.find("ef").as_uint64().value_or(kDefaultEf));
    json::Value row = args.find("vector");
    uint32_t dim = 0;
    for (json::Value v = row.first(); v.valid() && dim <= 4096; v = v.next_sibling())
        ++dim;
    if (k == 0 || k > kMaxK || dim == 0 || dim > 4096) {
        err = { mcp::ErrorCode::ValidationFailed, "k 1..100 and a vector of 1..4096 numbers", "invalid_query" };
        return false;
    }
    const size_t floats = dim * sizeof(float), filter = kMaxFilter * sizeof(uint64_t);
    Scratch mem(floats + filter + sizeof(abi::FedResult));
    if (!mem.ok() || !read_row(row, mem.as<float>(), dim)) {
        err = mem.ok() ? mcp::ToolError { mcp::ErrorCode::ValidationFailed, "the vector's numbers", "invalid_query" }
                       : mcp::ToolError { mcp::ErrorCode::InternalError, "no memory for the query" };
        return false;
    }
    auto* ids = mem.as<uint64_t>(floats);
    auto* result = mem.as<abi::FedResult>(floats + filter);
    abi::FedQuery q {};
    if (json::Value only = args.find("filter_ids"); only.valid()) {
        size_t n = 0;
        if (!read_ids(only, ids, kMaxFilter, n)) {
            err = { mcp::ErrorCode::ValidationFailed, "filter_ids: at most 1,024 integer ids", "invalid_filter" };
            return false;
        }
        q.filter_count = static_cast<uint32_t>(sort_unique(ids, n));
        q.filter = reinterpret_cast<uint64_t>(ids);
        if (n == 0) { // (a filter of no ids accepts none, as at a voter: nothing to ask)
            w.begin_object().key("hits").begin_array().end_array().key("count").number(0).end_object();
            return true;
        }
        if (floats + q.filter_count * sizeof(uint64_t) > abi::kFedMaxInput) {
            err = { mcp::ErrorCode::ValidationFailed,
                    "this node holds no copy of the collection, and the query with its filter_ids is more than one "
                    "request to a voter carries (the vector's numbers x 4 + the ids x 8 bytes, 16 KiB): call one of "
                    "its voters (cluster_status: consensus.collections)",
                    "held_elsewhere" };
            return false;
        }
    }
    const bool with_provenance = args.find("with_provenance").as_bool().value_or(false);
    q.op = abi::kFedSearch;
    q.flags = with_provenance ? abi::kFedWithProvenance : 0;
    q.dim = dim;
    q.k = k;
    q.ef = ef < k ? k : ef;
    if (!read_elsewhere(args, q, mem.as<float>(), *result, err, ctx))
        return false;
    w.begin_object().key("hits").begin_array();
    for (uint32_t i = 0; i < result->count && i < abi::kFedMaxK; ++i) {
        const abi::FedHit& h = result->hits[i];
        w.begin_object().key("id").number(h.id).key("distance").number(static_cast<double>(h.distance));
        if (with_provenance) {
            char node_id[mcp::kProvenanceIdText];
            mcp::format_provenance_id(h.provenance, node_id);
            w.key("provenance_node_id").string(node_id);
        }
        w.end_object();
    }
    w.end_array().key("count").number(result->count);
    write_served_by(w, result->confirmed != 0, result->nodes[0]);
    w.end_object();
    return true;
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    if (args.find("scope").plain_string().value_or("") == "cluster")
        return run_federated(args, w, err, ctx);
    if (ctx.elsewhere())
        return run_elsewhere(args, w, err, ctx);
    auto stats = stats_of(ctx.cap);
    if (!stats) {
        err = error_of(-static_cast<int64_t>(stats.error()));
        return false;
    }
    const uint32_t dim = stats->dim;
    Consistency consistency = Consistency::Single;
    if (!read_consistency(args, ctx.cap, *stats, consistency, err))
        return false;
    auto k = static_cast<uint32_t>(args.find("k").as_uint64().value_or(kDefaultK));
    auto ef = static_cast<uint32_t>(args.find("ef").as_uint64().value_or(kDefaultEf));
    if (k == 0 || k > kMaxK) {
        err = { mcp::ErrorCode::ValidationFailed, "k must be 1..100", "k_out_of_range" };
        return false;
    }
    const size_t floats = dim * sizeof(float), hits = kMaxK * sizeof(hnsw::Hit), filter = kMaxFilter * sizeof(uint64_t);
    Scratch mem(floats + hits + filter);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the query" };
        return false;
    }
    auto* query = mem.as<float>();
    auto* out = mem.as<hnsw::Hit>(floats);
    auto* ids = mem.as<uint64_t>(floats + hits);
    if (!read_row(args.find("vector"), query, dim)) {
        err = { mcp::ErrorCode::ValidationFailed, "the query must have exactly the collection's dimension",
                "dimension_mismatch" };
        return false;
    }
    abi::SearchFilter f {};
    json::Value only = args.find("filter_ids");
    if (only.valid()) {
        size_t n = 0;
        if (!read_ids(only, ids, kMaxFilter, n)) {
            err = { mcp::ErrorCode::ValidationFailed, "filter_ids: at most 1,024 integer ids", "invalid_filter" };
            return false;
        }
        f = { reinterpret_cast<uint64_t>(ids), sort_unique(ids, n) };
    }
    int64_t n = sys::vec_search(ctx.cap, query, k, ef < k ? k : ef, out, only.valid() ? &f : 0);
    if (n < 0) {
        err = error_of(n);
        return false;
    }
    const bool with_provenance = args.find("with_provenance").as_bool().value_or(false);
    w.begin_object().key("hits").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        w.begin_object().key("id").number(out[i].id).key("distance").number(static_cast<double>(out[i].distance));
        if (with_provenance) {
            // The query is spent: its buffer takes the vector vec_get copies along. A hit
            // replaced since names its new write; one deleted since, none ("").
            uint64_t node = 0;
            sys::vec_get(ctx.cap, out[i].id, query, &node);
            char node_id[mcp::kProvenanceIdText];
            mcp::format_provenance_id(node, node_id);
            w.key("provenance_node_id").string(node_id);
        }
        w.end_object();
    }
    w.end_array().key("count").number(n);
    write_consistency(w, consistency);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "vector_search",
    "Nearest-neighbour search",
    "Up to k nearest live vectors to a query (ascending distance), optionally only among given ids; with scope "
    "cluster, merged from every live node's collection of that name.",
    kSearchIn,
    kSearchOut,
    mcp::kVectorRead,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "read",
    "collection"
};

} // namespace

MCPD_TOOL(vector_search) { kTool, run, Grant::CollectionOrCluster, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

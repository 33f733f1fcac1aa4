// vector_search and vector_get: read-only bodies working through the one collection capability
// the call's token granted (read rights only).
#include "vector_support.h"

#include "../syscall/sys.h"
#include "../vector/collection.h"

#include <hnsw/params.h>
#include <mcp/policy/provenance.h>

namespace mcpd::vec {
namespace {

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

} // namespace

bool search(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto dim = dimension_of(ctx.cap);
    if (!dim) {
        err = error_of(-static_cast<int64_t>(dim.error()));
        return false;
    }
    auto k = static_cast<uint32_t>(args.find("k").as_uint64().value_or(kDefaultK));
    auto ef = static_cast<uint32_t>(args.find("ef").as_uint64().value_or(kDefaultEf));
    if (k == 0 || k > kMaxK) {
        err = { mcp::ErrorCode::ValidationFailed, "k must be 1..100", "k_out_of_range" };
        return false;
    }
    const size_t floats = *dim * sizeof(float), hits = kMaxK * sizeof(hnsw::Hit), filter = kMaxFilter * sizeof(uint64_t);
    Scratch mem(floats + hits + filter);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the query" };
        return false;
    }
    auto* query = mem.as<float>();
    auto* out = mem.as<hnsw::Hit>(floats);
    auto* ids = mem.as<uint64_t>(floats + hits);
    if (!read_row(args.find("vector"), query, *dim)) {
        err = { mcp::ErrorCode::ValidationFailed, "the query must have exactly the collection's dimension", "dimension_mismatch" };
        return false;
    }
    vector::SearchFilter f {};
    json::Value only = args.find("filter_ids");
    if (only.valid()) {
        size_t n = 0;
        if (!read_ids(only, ids, kMaxFilter, n)) {
            err = { mcp::ErrorCode::ValidationFailed, "filter_ids: at most 1,024 integer ids", "invalid_filter" };
            return false;
        }
        f = { reinterpret_cast<uint64_t>(ids), sort_unique(ids, n) };
    }
    int64_t n = sys::call(sys::Number::vec_search, ctx.cap, reinterpret_cast<uint64_t>(query), k, ef < k ? k : ef,
                          reinterpret_cast<uint64_t>(out), only.valid() ? reinterpret_cast<uint64_t>(&f) : 0);
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
            sys::call(sys::Number::vec_get, ctx.cap, out[i].id, reinterpret_cast<uint64_t>(query), reinterpret_cast<uint64_t>(&node));
            char node_id[mcp::kProvenanceIdText];
            mcp::format_provenance_id(node, node_id);
            w.key("provenance_node_id").string(node_id);
        }
        w.end_object();
    }
    w.end_array().key("count").number(n).end_object();
    return true;
}

bool get(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto dim = dimension_of(ctx.cap);
    if (!dim) {
        err = error_of(-static_cast<int64_t>(dim.error()));
        return false;
    }
    constexpr size_t kMaxIds = 16;
    uint64_t ids[kMaxIds];
    size_t n = 0;
    if (!read_ids(args.find("ids"), ids, kMaxIds, n)) {
        err = { mcp::ErrorCode::ValidationFailed, "ids: 1..16 integer ids", "invalid_ids" };
        return false;
    }
    Scratch mem(*dim * sizeof(float));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the vector" };
        return false;
    }
    auto* v = mem.as<float>();
    bool found[kMaxIds] = {};
    w.begin_object().key("vectors").begin_array();
    for (size_t i = 0; i < n; ++i) {
        uint64_t node = 0;
        int64_t rc = sys::call(sys::Number::vec_get, ctx.cap, ids[i], reinterpret_cast<uint64_t>(v), reinterpret_cast<uint64_t>(&node));
        if (rc == -static_cast<int64_t>(ktl::Error::NotFound))
            continue;
        if (rc < 0) {
            err = error_of(rc);
            return false;
        }
        found[i] = true;
        char node_id[mcp::kProvenanceIdText];
        mcp::format_provenance_id(node, node_id);
        w.begin_object().key("id").number(ids[i]).key("provenance_node_id").string(node_id).key("vector").begin_array();
        for (uint32_t d = 0; d < *dim; ++d)
            w.number(static_cast<double>(v[d]));
        w.end_array().end_object();
    }
    w.end_array().key("missing").begin_array();
    for (size_t i = 0; i < n; ++i)
        if (!found[i])
            w.number(ids[i]);
    w.end_array().end_object();
    return true;
}

} // namespace mcpd::vec

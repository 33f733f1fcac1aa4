// Vector tool descriptors (schemas, scopes, grants) and the store-level bodies: create, drop,
// list and stats. Every schema is bounded (strings maxLength, numbers ranges, arrays maxItems).
#include "vector_tools.h"
#include "vector_support.h"

#include "../cap/kcap.h"
#include "../syscall/sys.h"
#include "../vector/collection.h"
#include "../vector/store.h"

#include <hnsw/index.h>
#include <mcp/policy/roles.h>

namespace mcpd {
namespace {

#define NAME_SCHEMA R"({"type":"string","minLength":1,"maxLength":64,"format":"name","description":"letters, digits, _ - . but not only dots"})"
#define ID_SCHEMA R"({"type":"integer","minimum":0,"maximum":9007199254740991})"
#define COMPONENT_SCHEMA R"({"type":"number","minimum":-3.4e38,"maximum":3.4e38})"

const char* kCreateIn = R"({"type":"object","properties":{"name":)" NAME_SCHEMA R"(,)"
                        R"("dim":{"type":"integer","minimum":1,"maximum":4096},)"
                        R"("metric":{"type":"string","maxLength":6,"enum":["l2","cosine","ip"]},)"
                        R"("m":{"type":"integer","minimum":2,"maximum":64,"description":"links per node, default 16"},)"
                        R"("ef_construction":{"type":"integer","minimum":1,"maximum":4096,"description":"default 200"},)"
                        R"("max_elements":{"type":"integer","minimum":1,"maximum":1000000,"description":"capacity; default: what the budget holds, at most 100000"},)"
                        R"("budget_bytes":{"type":"integer","minimum":65536,"maximum":67108864,"description":"memory budget, default 64 MiB"},)"
                        R"("durability":{"type":"string","maxLength":6,"enum":["disk","memory"],"description":"disk (default): every change is answered once it is on the disk and survives a restart; memory: faster, gone at restart"}},)"
                        R"("required":["name","dim","metric"],"additionalProperties":false})";
const char* kCreateOut = R"({"type":"object","properties":{"name":{"type":"string"},"dim":{"type":"integer"},"metric":{"type":"string"},)"
                         R"("m":{"type":"integer"},"ef_construction":{"type":"integer"},"max_elements":{"type":"integer"},)"
                         R"("bytes_budget":{"type":"integer"},"durability":{"type":"string","enum":["disk","memory"]}},"required":["name","dim","metric","max_elements"]})";
const char* kNameIn = R"({"type":"object","properties":{"name":)" NAME_SCHEMA R"(},"required":["name"],"additionalProperties":false})";
const char* kDropOut = R"({"type":"object","properties":{"dropped":{"type":"string"}},"required":["dropped"]})";
const char* kNoArgs = R"({"type":"object","properties":{},"additionalProperties":false})";
const char* kListOut = R"({"type":"object","properties":{"collections":{"type":"array","items":{"type":"object","properties":{)"
                       R"("name":{"type":"string"},"dim":{"type":"integer"},"metric":{"type":"string"},"m":{"type":"integer"},)"
                       R"("ef_construction":{"type":"integer"},"max_elements":{"type":"integer"},"count":{"type":"integer"},)"
                       R"("bytes_budget":{"type":"integer"},"durability":{"type":"string","enum":["disk","memory"]}}}}},"required":["collections"]})";
const char* kCollectionIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(},"required":["collection"],"additionalProperties":false})";
const char* kStatsOut = R"({"type":"object","properties":{"collection":{"type":"string"},"count":{"type":"integer"},"deleted":{"type":"integer"},)"
                        R"("levels":{"type":"integer"},"bytes_used":{"type":"integer"},"bytes_budget":{"type":"integer"},)"
                        R"("distance_computations":{"type":"integer"},"dim":{"type":"integer"},"metric":{"type":"string"}},)"
                        R"("required":["count","deleted","levels","bytes_used","distance_computations"]})";
const char* kUpsertIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                        R"("ids":{"type":"array","minItems":1,"maxItems":4096,"items":)" ID_SCHEMA R"(},)"
                        R"("vectors":{"type":"array","maxItems":4096,"description":"one row per id",)"
                        R"("items":{"type":"array","maxItems":4096,"items":)" COMPONENT_SCHEMA R"(}},)"
                        R"("vectors_f32":{"type":"array","minItems":1,"maxItems":64,"items":{"type":"string","maxLength":65536},)"
                        R"("description":"instead of vectors: base64 strings of whole rows of little-endian float32, in order"}},)"
                        R"("required":["collection","ids"],"additionalProperties":false})";
const char* kUpsertOut = R"({"type":"object","properties":{"upserted":{"type":"integer"},"requested":{"type":"integer"},)"
                         R"("count":{"type":"integer"},"provenance_node_id":{"type":"string","description":"this call's node: what the stored vectors remember"}},)"
                         R"("required":["upserted","requested"]})";
const char* kSearchIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                        R"("vector":{"type":"array","minItems":1,"maxItems":4096,"items":)" COMPONENT_SCHEMA R"(},)"
                        R"("k":{"type":"integer","minimum":1,"maximum":100,"description":"default 10"},)"
                        R"("ef":{"type":"integer","minimum":1,"maximum":512,"description":"default 64, raised to k"},)"
                        R"("filter_ids":{"type":"array","maxItems":1024,"items":)" ID_SCHEMA R"(,"description":"only these ids may be returned"},)"
                        R"("with_provenance":{"type":"boolean","description":"each hit also names the provenance node of the write that stored it"}},)"
                        R"("required":["collection","vector"],"additionalProperties":false})";
const char* kSearchOut = R"({"type":"object","properties":{"hits":{"type":"array","items":{"type":"object",)"
                         R"("properties":{"id":{"type":"integer"},"distance":{"type":"number"},"provenance_node_id":{"type":"string"}}}},"count":{"type":"integer"}},)"
                         R"("required":["hits","count"]})";
const char* kGetIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                     R"("ids":{"type":"array","minItems":1,"maxItems":16,"items":)" ID_SCHEMA R"(}},)"
                     R"("required":["collection","ids"],"additionalProperties":false})";
const char* kGetOut = R"({"type":"object","properties":{"vectors":{"type":"array","items":{"type":"object",)"
                      R"("properties":{"id":{"type":"integer"},"vector":{"type":"array","items":{"type":"number"}},)"
                      R"("provenance_node_id":{"type":"string","description":"the provenance node of the write that stored it (provenance://node/{id}); empty: unknown"}}}},)"
                      R"("missing":{"type":"array","items":{"type":"integer"}}},"required":["vectors","missing"]})";
const char* kDeleteIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                        R"("ids":{"type":"array","minItems":1,"maxItems":1024,"items":)" ID_SCHEMA R"(}},)"
                        R"("required":["collection","ids"],"additionalProperties":false})";
const char* kDeleteOut = R"({"type":"object","properties":{"deleted":{"type":"integer"},"missing":{"type":"array","items":{"type":"integer"}}},)"
                         R"("required":["deleted","missing"]})";

const char* kExportIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                        R"("offset":{"type":"integer","minimum":0,"maximum":134217728,"description":"first byte of this page, default 0"},)"
                        R"("length":{"type":"integer","minimum":1,"maximum":45000,"description":"bytes in this page, default 45000"}},)"
                        R"("required":["collection"],"additionalProperties":false})";
const char* kExportOut = R"({"type":"object","properties":{"collection":{"type":"string"},"size":{"type":"integer"},)"
                         R"("generation":{"type":"integer"},"offset":{"type":"integer"},"length":{"type":"integer"},)"
                         R"("next":{"type":"integer"},"page_crc32":{"type":"integer"},"data":{"type":"string"}},)"
                         R"("required":["size","generation","offset","length","next","page_crc32","data"]})";
const char* kImportIn = R"({"type":"object","properties":{"name":)" NAME_SCHEMA R"(,)"
                        R"("snapshot_b64":{"type":"array","minItems":1,"maxItems":64,"items":{"type":"string","maxLength":65536},)"
                        R"("description":"the snapshot, or the next chunk of it, as base64 strings decoded one after the other"},)"
                        R"("size":{"type":"integer","minimum":1,"maximum":68157440,"description":"the whole snapshot's size"},)"
                        R"("offset":{"type":"integer","minimum":0,"maximum":68157440,"description":"where this chunk starts: 0 first, then the next of the previous answer"},)"
                        R"("crc32":{"type":"integer","minimum":0,"maximum":4294967295},)"
                        R"("max_elements":{"type":"integer","minimum":1,"maximum":1000000,"description":"the new collection's capacity (at least the snapshot's slots); default: twice its slots, at least 1024, never more than the snapshot declares"}},)"
                        R"("required":["name","snapshot_b64","size"],"additionalProperties":false})";
const char* kImportOut = R"({"type":"object","properties":{"imported":{"type":"string"},"name":{"type":"string"},)"
                         R"("size":{"type":"integer"},"received":{"type":"integer"},"next":{"type":"integer"},)"
                         R"("max_elements":{"type":"integer"},"provenance_node_id":{"type":"string","description":"the import's node: what the imported vectors remember"}},"required":["size"]})";

uint32_t parse_metric(const json::Value& v) {
    for (uint32_t m = 0; m < 3; ++m)
        if (v.string_equals(vec::metric_name(m)))
            return m;
    return ~0u;
}

// A create or drop the store answers WouldBlock for a moment (a checkpoint holding writes back,
// the last requests on a collection draining): tried again for up to eight seconds (a checkpoint
// of a large collection takes seconds; the tool limit is ten), in steps of
// 5 ms, before the caller hears `busy`.
template <typename Call>
int64_t store_call_retrying(Call&& call) {
    int64_t rc = call();
    for (int i = 0; i < 1600 && rc == -static_cast<int64_t>(ktl::Error::WouldBlock); ++i) {
        sys::sleep_ns(5'000'000);
        rc = call();
    }
    return rc;
}

// Capacity for a budget: the largest element count whose arena fits (memory_needed grows with
// the count), capped so a default collection does not claim the whole budget for nothing.
uint32_t capacity_for(hnsw::Params p, uint64_t budget, uint32_t cap) {
    uint32_t lo = 0, hi = cap;
    while (lo < hi) { // at most 20 rounds for cap <= 10^6
        uint32_t mid = lo + (hi - lo + 1) / 2;
        p.max_elements = mid;
        if (hnsw::Index::memory_needed(p) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

bool collection_create(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("name").plain_string();
    uint32_t metric = parse_metric(args.find("metric"));
    if (!name || !vector::valid_name(*name) || metric == ~0u) {
        err = { mcp::ErrorCode::ValidationFailed, "name: letters, digits, _ - . only, not only dots", "invalid_name" };
        return false;
    }
    hnsw::Params p;
    p.dim = static_cast<uint32_t>(args.find("dim").as_uint64().value_or(0));
    p.metric = static_cast<hnsw::Metric>(metric);
    p.m = static_cast<uint32_t>(args.find("m").as_uint64().value_or(16));
    p.ef_construction = static_cast<uint32_t>(args.find("ef_construction").as_uint64().value_or(200));
    p.max_ef = 512;
    uint64_t budget = args.find("budget_bytes").as_uint64().value_or(vector::kMaxCollectionBytes);
    if (budget > vector::kMaxCollectionBytes)
        budget = vector::kMaxCollectionBytes;
    json::Value given = args.find("max_elements");
    p.max_elements = given.valid() ? static_cast<uint32_t>(given.as_uint64().value_or(0)) : capacity_for(p, budget, 100000);
    if (p.max_elements == 0 || !p.validate() || hnsw::Index::memory_needed(p) > budget) {
        err = { mcp::ErrorCode::ValidationFailed, "these parameters do not fit the memory budget", "over_budget" };
        return false;
    }
    const bool memory = args.find("durability").plain_string().value_or("disk") == "memory";
    vector::CreateParams cp { p.dim, metric, p.m, p.ef_construction, p.max_elements, p.max_ef,
                              memory ? vector::kCreateMemoryOnly : 0 };
    int64_t rc = store_call_retrying([&] {
        return sys::call(sys::Number::store_create, ctx.cap, reinterpret_cast<uint64_t>(name->data()), name->size(),
                         reinterpret_cast<uint64_t>(&cp));
    });
    if (rc < 0) {
        err = rc == -static_cast<int64_t>(ktl::Error::Full)
                  ? mcp::ToolError { mcp::ErrorCode::InternalError, "the store holds 32 collections already", "store_full" }
                  : vec::error_of(rc);
        return false;
    }
    w.begin_object().key("name").string(*name).key("dim").number(p.dim).key("metric").string(vec::metric_name(metric));
    w.key("m").number(p.m).key("ef_construction").number(p.ef_construction).key("max_elements").number(p.max_elements);
    uint64_t reserved = 4096; // the store takes whole pages, a power of two of them
    while (reserved < hnsw::Index::memory_needed(p))
        reserved *= 2;
    // 1: logged to the disk; 0: no disk (or asked for memory): it lives in memory only.
    w.key("bytes_budget").number(reserved).key("durability").string(rc == 1 ? "disk" : "memory").end_object();
    return true;
}

bool collection_drop(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("name").plain_string();
    if (!name) {
        err = { mcp::ErrorCode::ValidationFailed, "not a valid collection name", "invalid_name" };
        return false;
    }
    int64_t rc = store_call_retrying([&] {
        return sys::call(sys::Number::store_drop, ctx.cap, reinterpret_cast<uint64_t>(name->data()), name->size());
    });
    if (rc < 0) {
        err = rc == -static_cast<int64_t>(ktl::Error::NotFound)
                  ? mcp::ToolError { mcp::ErrorCode::NotFound, "no collection of that name", "missing_collection" }
                  : vec::error_of(rc);
        return false;
    }
    w.begin_object().key("dropped").string(*name).end_object();
    return true;
}

bool collection_list(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vec::Scratch mem(sizeof(vector::StoreEntry) * vector::kMaxNamed);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the list" };
        return false;
    }
    auto* rows = mem.as<vector::StoreEntry>();
    int64_t n = sys::call(sys::Number::store_list, ctx.cap, reinterpret_cast<uint64_t>(rows), vector::kMaxNamed);
    if (n < 0) {
        err = vec::error_of(n);
        return false;
    }
    w.begin_object().key("collections").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        const auto& r = rows[i];
        w.begin_object().key("name").string(r.name).key("dim").number(r.dim).key("metric").string(vec::metric_name(r.metric));
        w.key("m").number(r.m).key("ef_construction").number(r.ef_construction).key("max_elements").number(r.max_elements);
        w.key("count").number(r.count).key("bytes_budget").number(r.bytes_budget);
        w.key("durability").string(r.durable ? "disk" : "memory").end_object();
    }
    w.end_array().end_object();
    return true;
}

bool collection_stats(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vector::Stats st {};
    int64_t rc = sys::call(sys::Number::vec_stats, ctx.cap, reinterpret_cast<uint64_t>(&st));
    if (rc < 0) {
        err = vec::error_of(rc);
        return false;
    }
    w.begin_object().key("collection").string(args.find("collection").plain_string().value_or(""));
    w.key("count").number(st.count).key("deleted").number(st.deleted).key("levels").number(st.levels);
    w.key("bytes_used").number(st.bytes_used).key("bytes_budget").number(st.bytes_budget);
    w.key("distance_computations").number(st.distance_computations);
    w.key("dim").number(st.dim).key("metric").string(vec::metric_name(st.metric)).end_object();
    return true;
}

constexpr ToolImpl kImpls[] = {
    { "collection_create", collection_create, Grant::Store, kcap::kCreate },
    { "collection_drop", collection_drop, Grant::Store, kcap::kDrop },
    { "collection_list", collection_list, Grant::Store, kcap::kRead },
    { "collection_stats", collection_stats, Grant::Collection, kcap::kRead },
    // Read too: the body needs the collection's dimension and reports its count afterwards.
    { "vector_upsert", vec::upsert, Grant::Collection, kcap::kRead | kcap::kWrite },
    { "vector_search", vec::search, Grant::Collection, kcap::kRead },
    { "vector_get", vec::get, Grant::Collection, kcap::kRead },
    { "vector_delete", vec::remove, Grant::Collection, kcap::kWrite },
    { "collection_export", vec::export_snapshot, Grant::Collection, kcap::kRead },
    { "collection_import", vec::import_snapshot, Grant::Store, kcap::kImport },
};

const mcp::Tool kTools[] = {
    { "collection_create", "Create a vector collection",
      "New HNSW collection: dimension (<= 4096), metric l2 | cosine | ip, M, ef_construction, capacity or memory budget.",
      kCreateIn, kCreateOut, mcp::kVectorAdmin, nullptr, mcp::ToolResult::Structured, 0, "create", "name" },
    { "collection_drop", "Drop a vector collection", "Destroys a collection and everything in it (refused while it is busy).",
      kNameIn, kDropOut, mcp::kVectorAdmin, nullptr, mcp::ToolResult::Structured, 0, "drop", "name" },
    { "collection_list", "List vector collections", "Every collection with its parameters and live vector count.", kNoArgs,
      kListOut, mcp::kVectorRead, nullptr, mcp::ToolResult::Structured, 0, "read", nullptr },
    { "collection_stats", "Vector collection statistics",
      "Live and deleted vectors, graph levels, bytes used and budgeted, distance computations.", kCollectionIn, kStatsOut,
      mcp::kVectorRead, nullptr, mcp::ToolResult::Structured, 0, "read", "collection" },
    { "vector_upsert", "Insert or replace vectors",
      "A batch of ids with their vectors (JSON rows or base64 float32); reports progress, stops when cancelled keeping "
      "what was stored.",
      kUpsertIn, kUpsertOut, mcp::kVectorWrite, nullptr, mcp::ToolResult::Structured, 0, "write", "collection" },
    { "vector_search", "Nearest-neighbour search",
      "Up to k nearest live vectors to a query (ascending distance), optionally only among given ids.", kSearchIn,
      kSearchOut, mcp::kVectorRead, nullptr, mcp::ToolResult::Structured, 0, "read", "collection" },
    { "vector_get", "Get vectors by id", "The stored vectors of up to 16 ids (cosine collections store them normalised).",
      kGetIn, kGetOut, mcp::kVectorRead, nullptr, mcp::ToolResult::Structured, 0, "read", "collection" },
    { "vector_delete", "Delete vectors by id", "Deletes ids; they are never returned by a search afterwards.", kDeleteIn,
      kDeleteOut, mcp::kVectorWrite, nullptr, mcp::ToolResult::Structured, 0, "delete", "collection" },
    { "collection_export", "Export a collection snapshot",
      "One page (<= 45,000 bytes, base64) of the collection's CRC-checked snapshot, with the snapshot's size, the collection's write generation (the same on every page of one snapshot) and the page's CRC-32.",
      kExportIn, kExportOut, mcp::kVectorRead, nullptr, mcp::ToolResult::Structured, 0, "read", "collection" },
    { "collection_import", "Import a collection snapshot",
      "A new collection from a snapshot (base64 strings, checked whole: CRCs, structure, parameters) under a new name; "
      "a large one in chunks, in order from offset 0, each answered with the next offset until it is imported. "
      "Its memory follows what the snapshot holds unless max_elements asks for more.",
      kImportIn, kImportOut, mcp::kVectorAdmin, nullptr, mcp::ToolResult::Structured, 0, "import", "name" },
};

} // namespace

std::span<const mcp::Tool> vector_tools() { return kTools; }
std::span<const ToolImpl> vector_tool_impls() { return kImpls; }

} // namespace mcpd

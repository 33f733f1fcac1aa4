// collection_create: a new HNSW collection. Its token grants the store, create only.
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <hnsw/index.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kCreateIn =
    R"({"type":"object","properties":{"name":)" NAME_SCHEMA R"(,)"
    R"("kind":{"type":"string","enum":["vectors","documents"],"description":"vectors (default): float vectors you bring (dim and metric required); documents: texts you store and find with the document_* tools, the appliance indexing their words and embedding their meaning"},)"
    R"("max_documents":{"type":"integer","minimum":1,"maximum":1000000,"description":"kind documents: how many it holds, default 10000"},)"
    R"("document_bytes":{"type":"integer","minimum":64,"maximum":65536,"description":"kind documents: about how many bytes a document takes, text, id and metadata together, default 1536; memory is sized by it"},)"
    R"("dim":{"type":"integer","minimum":1,"maximum":4096},)"
    R"("metric":{"type":"string","maxLength":6,"enum":["l2","cosine","ip"]},)"
    R"("m":{"type":"integer","minimum":2,"maximum":64,"description":"links per node, default 16"},)"
    R"("ef_construction":{"type":"integer","minimum":1,"maximum":4096,"description":"default 200"},)"
    R"("max_elements":{"type":"integer","minimum":1,"maximum":1000000,"description":"capacity; default: what the budget holds, at most 100000"},)"
    R"("budget_bytes":{"type":"integer","minimum":65536,"maximum":67108864,"description":"memory budget, default 64 MiB"},)"
    R"("durability":{"type":"string","maxLength":6,"enum":["disk","memory"],"description":"disk (default): every change is answered once it is on the disk and survives a restart; memory: faster, gone at restart"},)"
    R"("replicas":{"type":"integer","enum":[1,3,5],"description":"1 (default): this node only; 3 or 5: replicated on that many voters of the cluster's consensus group (this node, which must be one, and the least loaded), in a Raft group of its own; each change answered once that group committed it and this node applied it"}},)"
    R"("required":["name"],"additionalProperties":false})";
constexpr const char* kCreateOut =
    R"({"type":"object","properties":{"name":{"type":"string"},"dim":{"type":"integer"},"metric":{"type":"string"},)"
    R"("m":{"type":"integer"},"ef_construction":{"type":"integer"},"max_elements":{"type":"integer"},)"
    R"("bytes_budget":{"type":"integer"},"durability":{"type":"string","enum":["disk","memory"]},"replicas":{"type":"integer"},)"
    R"("kind":{"type":"string"},"max_documents":{"type":"integer"}},"required":["name","kind"]})";

uint32_t parse_metric(const json::Value& v) {
    for (uint32_t m = 0; m < 3; ++m)
        if (v.string_equals(vec::metric_name(m)))
            return m;
    return ~0u;
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

// kind "documents": a document collection (docs/documents.md).
bool run_documents(std::string_view name, const json::Value& args, json::Writer& w, mcp::ToolError& err,
                   const ToolContext& ctx) {
    for (const char* vector_only : { "dim", "metric", "m", "ef_construction", "max_elements", "budget_bytes" })
        if (args.find(vector_only).valid()) {
            err = { mcp::ErrorCode::ValidationFailed,
                    "a document collection takes name, kind, max_documents and durability only (its vectors are "
                    "the embedder's)",
                    "invalid_arguments" };
            return false;
        }
    if (args.find("replicas").as_uint64().value_or(1) > 1) {
        err = { mcp::ErrorCode::ValidationFailed,
                "document collections are not replicated yet: replicas 1 only (docs/documents.md)",
                "invalid_arguments" };
        return false;
    }
    const uint32_t max_docs = static_cast<uint32_t>(args.find("max_documents").as_uint64().value_or(10000));
    const uint32_t doc_bytes = static_cast<uint32_t>(args.find("document_bytes").as_uint64().value_or(0));
    const bool memory = args.find("durability").plain_string().value_or("disk") == "memory";
    // (m: the bytes a document takes, abi::kCreateDocuments)
    abi::CreateParams cp {
        0, 1, doc_bytes, 0, max_docs, 0, abi::kCreateDocuments | (memory ? abi::kCreateMemoryOnly : 0)
    };
    int64_t rc = store_call_retrying([&] { return sys::store_create(ctx.cap, name.data(), name.size(), &cp); });
    if (rc < 0) {
        const auto e = static_cast<ktl::Error>(-rc);
        err = e == ktl::Error::Full ? mcp::ToolError { mcp::ErrorCode::InternalError,
                                                       "the store holds 32 collections already", "store_full" }
              : e == ktl::Error::NoMemory
                  ? mcp::ToolError { mcp::ErrorCode::ValidationFailed,
                                     "that many documents do not fit a document collection's 512 MiB (or the kernel's "
                                     "free memory): ask for fewer max_documents, or a smaller document_bytes",
                                     "over_budget" }
                  : vec::error_of(rc);
        return false;
    }
    w.begin_object().key("name").string(name).key("kind").string("documents").key("max_documents").number(max_docs);
    w.key("durability").string(rc == 1 ? "disk" : "memory").key("replicas").number(uint64_t(1)).end_object();
    return true;
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("name").plain_string();
    if (args.find("kind").string_equals("documents")) {
        if (!name || !abi::valid_collection_name(*name)) {
            err = { mcp::ErrorCode::ValidationFailed, "name: letters, digits, _ - . only, not only dots",
                    "invalid_name" };
            return false;
        }
        return run_documents(*name, args, w, err, ctx);
    }
    if (!args.find("dim").valid() || !args.find("metric").valid() || args.find("max_documents").valid() ||
        args.find("document_bytes").valid()) {
        err = {
            mcp::ErrorCode::ValidationFailed,
            "a vector collection needs dim and metric (max_documents and document_bytes are for kind \"documents\")",
            "invalid_arguments"
        };
        return false;
    }
    uint32_t metric = parse_metric(args.find("metric"));
    if (!name || !abi::valid_collection_name(*name) || metric == ~0u) {
        err = { mcp::ErrorCode::ValidationFailed, "name: letters, digits, _ - . only, not only dots", "invalid_name" };
        return false;
    }
    hnsw::Params p;
    p.dim = static_cast<uint32_t>(args.find("dim").as_uint64().value_or(0));
    p.metric = static_cast<hnsw::Metric>(metric);
    p.m = static_cast<uint32_t>(args.find("m").as_uint64().value_or(16));
    p.ef_construction = static_cast<uint32_t>(args.find("ef_construction").as_uint64().value_or(200));
    p.max_ef = 512;
    uint64_t budget = args.find("budget_bytes").as_uint64().value_or(abi::kMaxCollectionBytes);
    if (budget > abi::kMaxCollectionBytes)
        budget = abi::kMaxCollectionBytes;
    json::Value given = args.find("max_elements");
    p.max_elements = given.valid() ? static_cast<uint32_t>(given.as_uint64().value_or(0))
                                   : capacity_for(p, budget, 100000);
    if (p.max_elements == 0 || !p.validate() || hnsw::Index::memory_needed(p) > budget) {
        err = { mcp::ErrorCode::ValidationFailed, "these parameters do not fit the memory budget", "over_budget" };
        return false;
    }
    const bool memory = args.find("durability").plain_string().value_or("disk") == "memory";
    const uint32_t replicas = static_cast<uint32_t>(args.find("replicas").as_uint64().value_or(1));
    if (replicas > 1 && memory) {
        err = { mcp::ErrorCode::ValidationFailed,
                "a replicated collection keeps what the group committed: durability memory does not apply",
                "invalid_arguments" };
        return false;
    }
    const uint32_t flags = replicas > 1 ? abi::kCreateReplicated | (replicas << abi::kCreateReplicasShift)
                           : memory     ? abi::kCreateMemoryOnly
                                        : 0;
    abi::CreateParams cp { p.dim, metric, p.m, p.ef_construction, p.max_elements, p.max_ef, flags };
    int64_t rc = store_call_retrying([&] { return sys::store_create(ctx.cap, name->data(), name->size(), &cp); });
    if (rc < 0) {
        const auto e = static_cast<ktl::Error>(-rc);
        err =
            e == ktl::Error::Full ? mcp::ToolError { mcp::ErrorCode::InternalError,
                                                     "the store holds 32 collections already", "store_full" }
            : replicas > 1 && e == ktl::Error::NotReady
                ? mcp::ToolError { mcp::ErrorCode::ValidationFailed,
                                   "replicas 3 or 5 needs this node to be a voter of the cluster's consensus group "
                                   "(raft_voters=); none runs here",
                                   "no_consensus_group" }
            : replicas > 1 && e == ktl::Error::OutOfRange
                ? mcp::ToolError { mcp::ErrorCode::ValidationFailed,
                                   "replicas can be at most the live members that can hold one more collection's group "
                                   "(each holds 7 at most; cluster_status: members, consensus.collections)",
                                   "too_many_replicas" }
                : vec::error_of(rc);
        return false;
    }
    w.begin_object().key("name").string(*name).key("dim").number(p.dim).key("metric").string(vec::metric_name(metric));
    w.key("m").number(p.m).key("ef_construction").number(p.ef_construction).key("max_elements").number(p.max_elements);
    uint64_t reserved = 4096; // the store takes whole pages, a power of two of them
    while (reserved < hnsw::Index::memory_needed(p))
        reserved *= 2;
    // 1: logged to the disk; 0: no disk (or asked for memory): it lives in memory only.
    w.key("bytes_budget").number(reserved).key("durability").string(rc == 1 ? "disk" : "memory");
    w.key("replicas").number(replicas).key("kind").string("vectors").end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "collection_create",
    "Create a collection",
    "New collection. kind \"documents\": a place to store texts and find them by words or meaning (document_* "
    "tools; name, max_documents, durability). kind \"vectors\" (default): an HNSW index of your own vectors: "
    "dimension (<= 4096), metric l2 | cosine | ip, M, ef_construction, capacity or memory budget.",
    kCreateIn,
    kCreateOut,
    mcp::kVectorAdmin,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "create",
    "name"
};

} // namespace

MCPD_TOOL(collection_create) { kTool, run, Grant::Store, abi::kCreate, Effect::creates() };

} // namespace mcpd::tools

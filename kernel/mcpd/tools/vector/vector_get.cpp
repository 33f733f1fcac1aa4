// vector_get: the stored vectors of up to 16 ids, through the one collection capability the call's
// token granted (read only).
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/provenance.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kGetIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                               R"("ids":{"type":"array","minItems":1,"maxItems":16,"items":)" ID_SCHEMA R"(},)"
                               R"("consistency":)" CONSISTENCY_SCHEMA R"(},)"
                               R"("required":["collection","ids"],"additionalProperties":false})";
constexpr const char* kGetOut =
    R"({"type":"object","properties":{"vectors":{"type":"array","items":{"type":"object",)"
    R"("properties":{"id":{"type":"integer"},"vector":{"type":"array","items":{"type":"number"}},)"
    R"("provenance_node_id":{"type":"string","description":"the provenance node of the write that stored it (provenance://node/{id}); empty: unknown"}}}},)"
    R"("missing":{"type":"array","items":{"type":"integer"}},)"
    R"("consistency":{"type":"string","description":"a replicated collection's: linearizable, or local: this node's copy"},)" SERVED_BY_SCHEMA
    R"(},"required":["vectors","missing"]})";

constexpr size_t kMaxIds = 16;
static_assert(kMaxIds <= abi::kFedMaxGetIds);

// A replicated collection this node holds no copy of: one of its voters reads its copy, in as many
// answers as the vectors take (each answer read after its own read index).
bool run_elsewhere(const uint64_t* ids, size_t n, const json::Value& args, json::Writer& w, mcp::ToolError& err,
                   const ToolContext& ctx) {
    Scratch mem(sizeof(abi::FedResult));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the answer" };
        return false;
    }
    auto* r = mem.as<abi::FedResult>();
    bool found[kMaxIds] = {};
    bool confirmed = true;
    char served_by[32] = "";
    w.begin_object().key("vectors").begin_array();
    for (size_t from = 0; from < n;) {
        if (ctx.should_stop()) {
            err = stopped_error(ctx.expired());
            return false;
        }
        abi::FedQuery q {};
        q.op = abi::kFedGet;
        q.k = static_cast<uint32_t>(n - from);
        if (!read_elsewhere(args, q, ids + from, *r, err, ctx))
            return false;
        const size_t entry = sizeof(abi::FedVectorHead) + size_t(r->payload_dim) * sizeof(float);
        const uint8_t* p = r->payload;
        // The voter answered the ids from `from` on in order (found, or not found) as far as it went.
        size_t answered = 0;
        for (uint32_t i = 0; i < r->count && from + answered < n; ++i, p += entry) {
            abi::FedVectorHead head;
            __builtin_memcpy(&head, p, sizeof head);
            while (from + answered < n && ids[from + answered] != head.id)
                ++answered; // (one the voter does not hold: in `absent`)
            if (from + answered == n)
                break;
            found[from + answered++] = true;
            char node_id[mcp::kProvenanceIdText];
            mcp::format_provenance_id(head.provenance, node_id);
            w.begin_object().key("id").number(head.id).key("provenance_node_id").string(node_id);
            w.key("vector").begin_array();
            for (uint32_t d = 0; d < r->payload_dim; ++d) {
                float v;
                __builtin_memcpy(&v, p + sizeof head + d * sizeof(float), sizeof v);
                w.number(static_cast<double>(v));
            }
            w.end_array().end_object();
        }
        const size_t done = r->count + r->not_found; // the ids this answer covered
        if (done == 0 && !r->complete) {
            err = { mcp::ErrorCode::InternalError, "a voter answered none of the ids asked", "read_unconfirmed" };
            return false;
        }
        from = r->complete ? n : from + done;
        confirmed = confirmed && r->confirmed;
        __builtin_memcpy(served_by, r->nodes[0], sizeof served_by);
    }
    w.end_array().key("missing").begin_array();
    for (size_t i = 0; i < n; ++i)
        if (!found[i])
            w.number(ids[i]);
    w.end_array();
    write_served_by(w, confirmed, served_by);
    w.end_object();
    return true;
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    if (ctx.elsewhere()) {
        uint64_t ids[kMaxIds];
        size_t n = 0;
        if (!read_ids(args.find("ids"), ids, kMaxIds, n)) {
            err = { mcp::ErrorCode::ValidationFailed, "ids: 1..16 integer ids", "invalid_ids" };
            return false;
        }
        return run_elsewhere(ids, n, args, w, err, ctx);
    }
    auto stats = stats_of(ctx.cap);
    if (!stats) {
        err = error_of(-static_cast<int64_t>(stats.error()));
        return false;
    }
    const uint32_t dim = stats->dim;
    Consistency consistency = Consistency::Single;
    if (!read_consistency(args, ctx.cap, *stats, consistency, err))
        return false;
    uint64_t ids[kMaxIds];
    size_t n = 0;
    if (!read_ids(args.find("ids"), ids, kMaxIds, n)) {
        err = { mcp::ErrorCode::ValidationFailed, "ids: 1..16 integer ids", "invalid_ids" };
        return false;
    }
    Scratch mem(dim * sizeof(float));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the vector" };
        return false;
    }
    auto* v = mem.as<float>();
    bool found[kMaxIds] = {};
    w.begin_object().key("vectors").begin_array();
    for (size_t i = 0; i < n; ++i) {
        uint64_t node = 0;
        int64_t rc = sys::vec_get(ctx.cap, ids[i], v, &node);
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
        for (uint32_t d = 0; d < dim; ++d)
            w.number(static_cast<double>(v[d]));
        w.end_array().end_object();
    }
    w.end_array().key("missing").begin_array();
    for (size_t i = 0; i < n; ++i)
        if (!found[i])
            w.number(ids[i]);
    w.end_array();
    write_consistency(w, consistency);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = { "vector_get",
                              "Get vectors by id",
                              "The stored vectors of up to 16 ids (cosine collections store them normalised).",
                              kGetIn,
                              kGetOut,
                              mcp::kVectorRead,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "read",
                              "collection" };

} // namespace

MCPD_TOOL(vector_get) { kTool, run, Grant::CollectionOrCluster, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

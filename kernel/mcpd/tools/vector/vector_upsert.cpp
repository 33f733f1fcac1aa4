// vector_upsert: the writing body, through the one collection capability the
// call's token granted (read and write). A batch is checked whole before anything is stored,
// then stored in chunks; between chunks the body reports progress and stops when cancelled or out
// of time. Each chunk is one vec_insert, serialised against searches by the store, so a stop
// leaves exactly the ids of the chunks before it (a prefix of the batch) and a consistent index.
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>
#include "../../../log.h"

#include <ktl/base64.h>
#include <ktl/format.h>
#include <mcp/policy/provenance.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kUpsertIn =
    R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
    R"("ids":{"type":"array","minItems":1,"maxItems":4096,"items":)" ID_SCHEMA R"(},)"
    R"("vectors":{"type":"array","maxItems":4096,"description":"one row per id",)"
    R"("items":{"type":"array","maxItems":4096,"items":)" COMPONENT_SCHEMA R"(}},)"
    R"("vectors_f32":{"type":"array","minItems":1,"maxItems":64,"items":{"type":"string","maxLength":65536},)"
    R"("description":"instead of vectors: base64 strings of whole rows of little-endian float32, in order"}},)"
    R"("required":["collection","ids"],"additionalProperties":false})";
constexpr const char* kUpsertOut =
    R"({"type":"object","properties":{"upserted":{"type":"integer"},"requested":{"type":"integer"},)"
    R"("count":{"type":"integer"},"provenance_node_id":{"type":"string","description":"this call's node: what the stored vectors remember"}},)"
    R"("required":["upserted","requested"]})";

constexpr size_t kMaxBatch = 4096;
constexpr uint32_t kChunkFloats = 4096; // floats per vec_insert (16 KiB)
constexpr uint32_t kMaxChunk = 64;      // vectors per vec_insert: progress and cancellation granularity

// Where the rows come from: JSON arrays, or base64 strings of whole float32 rows read in order
// (the JSON reader caps one string at 64 KiB, so a large batch comes as several strings).
class Rows {
public:
    Rows(const json::Value& vectors, const json::Value& f32, uint32_t dim)
        : m_row(vectors.valid() ? vectors.first() : json::Value()), m_string(f32.valid() ? f32.first() : json::Value()),
          m_json(vectors.valid()), m_dim(dim) {}

    // Next `count` rows into out; false on a malformed row.
    bool next(float* out, size_t count) {
        for (size_t r = 0; r < count; ++r)
            if (!(m_json ? json_row(out + r * m_dim) : binary_row(out + r * m_dim)))
                return false;
        return true;
    }

private:
    bool json_row(float* out) {
        json::Value row = m_row;
        m_row = m_row.valid() ? m_row.next_sibling() : m_row;
        return read_row(row, out, m_dim);
    }

    // Little-endian float32 (AArch64 and the x86 host alike). A row never straddles strings:
    // check_batch() made every string a whole number of rows.
    bool binary_row(float* out) {
        const size_t bytes = m_dim * sizeof(float);
        while (m_left == 0) {
            if (!m_string.valid())
                return false;
            auto text = m_string.plain_string();
            m_string = m_string.next_sibling();
            if (!text)
                return false;
            m_b64 = ktl::Base64Reader(*text);
            m_left = m_b64.decoded_size();
        }
        if (m_left < bytes || m_b64.read(reinterpret_cast<uint8_t*>(out), bytes) != bytes)
            return false;
        m_left -= bytes;
        for (uint32_t i = 0; i < m_dim; ++i)
            if (!__builtin_isfinite(out[i]))
                return false;
        return true;
    }

    json::Value m_row;
    json::Value m_string;
    ktl::Base64Reader m_b64 { std::string_view() };
    size_t m_left = 0;
    bool m_json;
    uint32_t m_dim;
};

// Whole-batch check before anything is stored: shape, sizes, every value finite.
bool check_batch(const json::Value& vectors, const json::Value& f32, size_t n, uint32_t dim, float* chunk,
                 uint32_t per_chunk, mcp::ToolError& err) {
    if (vectors.valid() && vectors.size() != n) {
        err = { mcp::ErrorCode::ValidationFailed, "vectors must have one row per id", "count_mismatch" };
        return false;
    }
    if (f32.valid()) {
        size_t total = 0;
        const size_t row_bytes = dim * sizeof(float);
        for (json::Value s = f32.first(); s.valid(); s = s.next_sibling()) {
            auto text = s.plain_string();
            size_t bytes = text ? ktl::Base64Reader(*text).decoded_size() : 0;
            if (!text || bytes == 0 || bytes % row_bytes != 0) {
                err = { mcp::ErrorCode::ValidationFailed,
                        "each vectors_f32 string must be whole float32 rows in base64", "invalid_vector" };
                return false;
            }
            total += bytes;
        }
        if (total != n * row_bytes) {
            err = { mcp::ErrorCode::ValidationFailed, "vectors_f32 must hold one row per id", "count_mismatch" };
            return false;
        }
    }
    Rows rows(vectors, f32, dim);
    for (size_t done = 0; done < n;) {
        size_t count = n - done < per_chunk ? n - done : per_chunk;
        if (!rows.next(chunk, count)) {
            err = { mcp::ErrorCode::ValidationFailed, "each vector needs exactly dim finite float32 values",
                    "invalid_vector" };
            return false;
        }
        done += count;
    }
    return true;
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto dim = dimension_of(ctx.cap);
    if (!dim) {
        err = error_of(-static_cast<int64_t>(dim.error()));
        return false;
    }
    json::Value vectors = args.find("vectors");
    json::Value f32 = args.find("vectors_f32");
    if (vectors.valid() == f32.valid()) {
        err = { mcp::ErrorCode::ValidationFailed, "give either vectors or vectors_f32", "vectors_required" };
        return false;
    }
    uint32_t per_chunk = kChunkFloats / *dim;
    per_chunk = per_chunk == 0 ? 1 : per_chunk > kMaxChunk ? kMaxChunk : per_chunk;
    const size_t id_bytes = kMaxBatch * sizeof(uint64_t);
    Scratch mem(id_bytes + size_t(per_chunk) * *dim * sizeof(float));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the batch", "no_memory" };
        return false;
    }
    auto* ids = mem.as<uint64_t>();
    auto* chunk = mem.as<float>(id_bytes);
    size_t n = 0;
    if (!read_ids(args.find("ids"), ids, kMaxBatch, n) || n == 0) {
        err = { mcp::ErrorCode::ValidationFailed, "ids: 1..4,096 integer ids", "invalid_ids" };
        return false;
    }
    if (!check_batch(vectors, f32, n, *dim, chunk, per_chunk, err))
        return false;

    Rows rows(vectors, f32, *dim);
    size_t done = 0;
    bool stopped = false;
    // A batch of one chunk is still in `chunk` from the check: not read (and converted) twice.
    const bool checked_in_chunk = n <= per_chunk;
    while (done < n) {
        if (ctx.should_stop()) {
            stopped = true;
            break;
        }
        size_t count = n - done < per_chunk ? n - done : per_chunk;
        if (!checked_in_chunk && !rows.next(chunk, count)) { // checked above; a second read cannot differ
            err = { mcp::ErrorCode::InternalError, "batch changed while storing" };
            return false;
        }
        // Each vector remembers the provenance node of this call (the one its token was bound to).
        int64_t rc = sys::vec_insert(ctx.cap, ids + done, chunk, count, ctx.provenance());
        if (rc < 0 || static_cast<size_t>(rc) != count) {
            done += rc > 0 ? static_cast<size_t>(rc) : 0;
            KLOG_WARN("mcp: vector_upsert stopped by the store after %zu of %zu vectors", done, n);
            err = rc < 0
                      ? error_of(rc)
                      : mcp::ToolError { mcp::ErrorCode::InternalError, "the collection is full", "collection_full" };
            return false;
        }
        done += count;
        char msg[48];
        ktl::Formatter(msg, sizeof msg).append("upserted %zu of %zu", done, n);
        ctx.progress(done, n, msg);
    }
    if (stopped) {
        // The client gets no answer to a cancelled call (MCP "Cancellation"); the log says what
        // was kept: the first `done` ids of the batch, each complete.
        // Past the deadline the bridge also marks the call cancelled: the time limit comes first.
        bool late = ctx.expired();
        KLOG_NOTICE("mcp: vector_upsert %s after %zu of %zu vectors; the first %zu ids are stored",
                    late ? "stopped at the wall-time limit" : "cancelled", done, n, done);
        err = stopped_error(late);
        return false;
    }
    abi::VectorStats st {};
    sys::vec_stats(ctx.cap, &st);
    w.begin_object()
        .key("upserted")
        .number(static_cast<uint64_t>(done))
        .key("requested")
        .number(static_cast<uint64_t>(n));
    char node[mcp::kProvenanceIdText];
    mcp::format_provenance_id(ctx.provenance(), node);
    // (A collection other nodes hold is not counted here: its stand-in has no vectors.)
    if (st.replicated != abi::kStatsElsewhere)
        w.key("count").number(st.count);
    w.key("provenance_node_id").string(node).end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "vector_upsert",
    "Insert or replace vectors",
    "A batch of ids with their vectors (JSON rows or base64 float32); reports progress, stops when cancelled keeping "
    "what was stored.",
    kUpsertIn,
    kUpsertOut,
    mcp::kVectorWrite,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "write",
    "collection"
};

} // namespace

// Read too: the body needs the collection's dimension and reports its count afterwards.
MCPD_TOOL(vector_upsert) { kTool, run, Grant::Collection, abi::kRead | abi::kWrite, Effect::writes_ids() };

} // namespace mcpd::tools

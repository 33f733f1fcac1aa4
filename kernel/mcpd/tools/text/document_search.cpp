// document_search: the documents of a collection best matching a query, by words (BM25), by
// meaning (the embedder's vectors) or both fused (hybrid, the default). Its token grants that
// collection, read only. Texts come back within the result's budget (cut, and said so).
#include "document_family.h"
#include "../tool_def.h"
#include "../vector/vector_family.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kSearchIn =
    R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
    R"("query":{"type":"string","minLength":1,"maxLength":4096,"description":"what to look for, in words"},)"
    R"("k":{"type":"integer","minimum":1,"maximum":100,"description":"how many documents at most, default 10"},)"
    R"("mode":{"type":"string","enum":["hybrid","lexical","semantic"],"description":"hybrid (default): words and meaning fused; lexical: the query's words (BM25); semantic: meaning, by the embedder's vectors"},)"
    R"("filter":{"type":"object","additionalProperties":{"type":["string","number"],"maxLength":1024,"minimum":-1e308,"maximum":1e308},"description":"only documents whose metadata has each of these members, equal"},)"
    R"("text_bytes":{"type":"integer","minimum":64,"maximum":49152,"description":"each result's text is cut past this many bytes (default 2048), all results sharing the call's output limit"}},)"
    R"("required":["collection","query"],"additionalProperties":false})";
constexpr const char* kSearchOut =
    R"({"type":"object","properties":{"mode":{"type":"string"},"results":{"type":"array","items":{"type":"object","properties":{)"
    R"("id":{"type":"string"},"score":{"type":"number"},"text":{"type":"string"},"metadata":{"type":"object"},)"
    R"("truncated":{"type":"boolean","description":"the text was cut: document_get has all of it"}},"required":["id","score","text","metadata"]}},)"
    R"("incomplete":{"type":"boolean","description":"fewer results than found: the call's output limit was reached - ask for a smaller text_bytes or k"}},)"
    R"("required":["mode","results"]})";

// DocQuery's modes by number (abi/vector.h).
constexpr const char* kModes[] = { "hybrid", "lexical", "semantic" };

uint32_t mode_of(const json::Value& v) {
    for (uint32_t m = 0; m < 3; ++m)
        if (v.string_equals(kModes[m]))
            return m;
    return 0;
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vec::Scratch mem(4096 + docs::kMaxText + docs::kMaxMetadata + abi::kDocMaxK * sizeof(abi::DocHit));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the search", "no_memory" };
        return false;
    }
    char* query = mem.as<char>();
    char* text = mem.as<char>(4096);
    char* meta = mem.as<char>(4096 + docs::kMaxText);
    auto* hits = mem.as<abi::DocHit>(4096 + docs::kMaxText + docs::kMaxMetadata);
    const size_t query_len = docs::string_arg(args.find("query"), { query, 4096 });
    if (query_len == 0) {
        err = { mcp::ErrorCode::ValidationFailed, "query: text of 1..4096 bytes", "invalid_query" };
        return false;
    }
    const uint32_t k = static_cast<uint32_t>(args.find("k").as_uint64().value_or(10));
    const json::Value filter = args.find("filter");
    const bool filtered = filter.is_object() && filter.size() > 0;
    json::Value mode_arg = args.find("mode");
    uint32_t mode = mode_of(mode_arg);
    // Without the model, a search that did not name its mode is a lexical one (said so in `mode`).
    // (A document collection's stats name the embedder's dimension, 0 without one.)
    abi::VectorStats st {};
    if (!mode_arg.valid() && sys::vec_stats(ctx.cap, &st) >= 0 && st.kind == 1 && st.dim == 0)
        mode = 1;
    // A filtered search looks at the most candidates the store gives, then keeps k that match.
    abi::DocQuery q { reinterpret_cast<uint64_t>(query), query_len, filtered ? abi::kDocMaxK : k, mode };
    const int64_t n = sys::doc_search(ctx.cap, &q, hits);
    if (n < 0) {
        err = docs::error_of(n);
        return false;
    }
    // The result's room (the call's output limit, some kept for the envelope): each result takes its
    // id, metadata and text from it; a result that does not fit ends the list (`incomplete`).
    size_t left = docs::result_room(ctx);
    size_t per_text = static_cast<size_t>(args.find("text_bytes").as_uint64().value_or(2048));
    if (per_text > left / k)
        per_text = left / k;
    w.begin_object().key("mode").string(kModes[mode]).key("results").begin_array();
    uint32_t kept = 0;
    bool incomplete = false;
    for (int64_t i = 0; i < n && kept < k; ++i) {
        abi::DocRead r { reinterpret_cast<uint64_t>(text),
                         docs::kMaxText,
                         reinterpret_cast<uint64_t>(meta),
                         docs::kMaxMetadata,
                         0,
                         0,
                         0 };
        // (A document deleted since the search ran is left out.)
        if (sys::doc_get(ctx.cap, hits[i].id, hits[i].id_length, &r) < 0)
            continue;
        const std::string_view metadata(meta, r.metadata_length);
        if (filtered && !docs::metadata_matches(metadata, filter))
            continue;
        const std::string_view id(hits[i].id, hits[i].id_length);
        const size_t overhead = docs::result_overhead(id, metadata);
        if (left < overhead + 64) {
            incomplete = true;
            break;
        }
        const size_t text_room = per_text < left - overhead ? per_text : left - overhead;
        const size_t text_json = docs::json_string_bytes({ text, r.text_length });
        left -= overhead + (text_json < text_room ? text_json : text_room);
        w.begin_object().key("id").string(id).key("score").number_f32(hits[i].score);
        w.key("text");
        const bool cut = docs::write_text(w, { text, r.text_length }, text_room);
        w.key("metadata");
        docs::write_metadata(w, metadata);
        if (cut)
            w.key("truncated").boolean(true);
        w.end_object();
        ++kept;
    }
    w.end_array();
    if (incomplete)
        w.key("incomplete").boolean(true);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "document_search",
    "Find stored text related to a query",
    "Searches a document collection with a query in plain words and answers the best documents (id, score, "
    "text, metadata), best first. Mode hybrid (default) finds documents sharing the query's words or its "
    "meaning; lexical only its words; semantic only its meaning. Filter by metadata members if you stored some.",
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

MCPD_TOOL(document_search) { kTool, run, Grant::Collection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

// document_upsert: stores texts (with an id and optional metadata each) in a document collection,
// which indexes their words (BM25) and, with the embedder's model, their meaning. Its token grants
// that collection, write. Documents go to the store in batches of up to 200 KiB, each one change
// (one log record): a call answers how many were stored.
#include "document_family.h"
#include "../tool_def.h"
#include "../vector/vector_family.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/provenance.h>
#include <mcp/policy/roles.h>
#include <text/doc_batch.h>

namespace mcpd::tools {
namespace {

constexpr size_t kMaxDocs = 256;
constexpr size_t kBatchBytes = 200 * 1024;

constexpr const char* kUpsertIn =
    R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
    R"("documents":{"type":"array","minItems":1,"maxItems":256,"items":{"type":"object","properties":{)"
    R"("id":)" DOC_ID_SCHEMA R"(,)"
    R"("text":{"type":"string","maxLength":65536,"description":"what to store and find later, up to 64 KiB"},)"
    R"("metadata":)" DOC_METADATA_SCHEMA R"(},"required":["id","text"],"additionalProperties":false}}},)"
    R"("required":["collection","documents"],"additionalProperties":false})";
constexpr const char* kUpsertOut =
    R"({"type":"object","properties":{"stored":{"type":"integer"},"documents":{"type":"integer","description":"in the collection now"},)"
    R"("provenance_node_id":{"type":"string","description":"this call's node: what the stored documents remember"}},)"
    R"("required":["stored"]})";

bool fail(mcp::ToolError& err, const char* message, const char* code) {
    err = { mcp::ErrorCode::ValidationFailed, message, code };
    return false;
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vec::Scratch mem(kBatchBytes + docs::kMaxText + docs::kMaxId);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the documents", "no_memory" };
        return false;
    }
    auto* batch = mem.as<std::byte>();
    char* text = mem.as<char>(kBatchBytes);
    char* id = mem.as<char>(kBatchBytes + docs::kMaxText);
    json::Value list = args.find("documents");
    const uint64_t total = list.size();
    uint64_t stored = 0;
    text::BatchWriter writer({ batch, kBatchBytes });
    auto send = [&]() -> bool {
        if (writer.count() == 0)
            return true;
        const size_t bytes = writer.finish(ctx.provenance());
        const uint32_t want = writer.count();
        const int64_t rc = sys::doc_upsert(ctx.cap, batch, bytes);
        if (rc < 0) {
            err = docs::error_of(rc);
            return false;
        }
        stored += static_cast<uint64_t>(rc);
        if (static_cast<uint32_t>(rc) != want) {
            err = docs::error_of(-static_cast<int64_t>(ktl::Error::Full));
            return false;
        }
        writer = text::BatchWriter({ batch, kBatchBytes });
        ctx.progress(stored, total, "documents stored");
        return true;
    };
    size_t n = 0;
    for (json::Value d = list.first(); d.valid() && n < kMaxDocs; d = d.next_sibling(), ++n) {
        const size_t id_len = docs::string_arg(d.find("id"), { id, docs::kMaxId });
        if (id_len == 0)
            return fail(err, "each document's id is text of 1..128 bytes", "invalid_id");
        const size_t text_len = docs::string_arg(d.find("text"), { text, docs::kMaxText });
        if (text_len == 0 && !d.find("text").string_equals(""))
            return fail(err, "each document's text is at most 64 KiB", "invalid_text");
        if (!json::valid_utf8({ text, text_len }) || !json::valid_utf8({ id, id_len }))
            return fail(err, "ids and texts must be valid Unicode (no lone surrogates)", "invalid_text");
        json::Value meta = d.find("metadata");
        const std::string_view meta_text = meta.valid() ? meta.json_text() : std::string_view {};
        if (meta_text.size() > docs::kMaxMetadata)
            return fail(err, "a document's metadata is at most 4 KiB of JSON", "invalid_metadata");
        if (ctx.should_stop())
            break;
        if (!writer.add({ id, id_len }, { text, text_len }, meta_text)) {
            if (!send())
                return false;
            if (!writer.add({ id, id_len }, { text, text_len }, meta_text))
                return fail(err, "the document does not fit a batch", "invalid_text");
        }
    }
    if (!send())
        return false;
    abi::VectorStats st {};
    sys::vec_stats(ctx.cap, &st);
    char node[mcp::kProvenanceIdText];
    mcp::format_provenance_id(ctx.provenance(), node);
    if (stored < total) { // stopped between batches (the first `stored` documents are kept)
        err = vec::stopped_error(ctx.expired());
        return false;
    }
    w.begin_object().key("stored").number(stored).key("documents").number(st.count);
    w.key("provenance_node_id").string(node).end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "document_upsert",
    "Store text so you can find it later",
    "Stores each document (an id you choose, its text, optional flat metadata) in a document collection; a "
    "document with an id already stored is replaced. Find them again with document_search by words or by "
    "meaning. Create the collection first with collection_create {name, kind: \"documents\"}.",
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

MCPD_TOOL(document_upsert) { kTool, run, Grant::Collection, abi::kRead | abi::kWrite, Effect::writes_ids() };

} // namespace mcpd::tools

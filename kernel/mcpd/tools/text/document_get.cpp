// document_get: stored documents by id, whole (within the result's 64 KiB: a text past what is
// left is cut, and said so). Its token grants the collection, read only.
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

constexpr size_t kMaxIds = 16;
constexpr size_t kMissingBytes = text::kIdListHeader + kMaxIds * (1 + docs::kMaxId);

constexpr const char* kGetIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                               R"("ids":{"type":"array","minItems":1,"maxItems":16,"items":)" DOC_ID_SCHEMA R"(}},)"
                               R"("required":["collection","ids"],"additionalProperties":false})";
constexpr const char* kGetOut =
    R"({"type":"object","properties":{"documents":{"type":"array","items":{"type":"object","properties":{)"
    R"("id":{"type":"string"},"text":{"type":"string"},"metadata":{"type":"object"},"text_bytes":{"type":"integer"},)"
    R"("truncated":{"type":"boolean"},"provenance_node_id":{"type":"string","description":"the node of the request that stored it"}},)"
    R"("required":["id","text","metadata"]}},"missing":{"type":"array","items":{"type":"string"}},)"
    R"("incomplete":{"type":"boolean","description":"the call's output limit was reached before every id: ask for the rest again"}},)"
    R"("required":["documents","missing"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vec::Scratch mem(docs::kMaxText + docs::kMaxMetadata + kMissingBytes);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the documents", "no_memory" };
        return false;
    }
    char* text = mem.as<char>();
    char* meta = mem.as<char>(docs::kMaxText);
    // The ids not stored, as an id list (lib/text/doc_batch.h), written back after the documents.
    const std::span<std::byte> missing_list(mem.as<std::byte>(docs::kMaxText + docs::kMaxMetadata), kMissingBytes);
    text::IdListWriter missing(missing_list);
    size_t left = docs::result_room(ctx);
    bool incomplete = false;
    w.begin_object().key("documents").begin_array();
    size_t n = 0;
    for (json::Value v = args.find("ids").first(); v.valid() && n < kMaxIds; v = v.next_sibling(), ++n) {
        char id[docs::kMaxId];
        const size_t id_len = docs::string_arg(v, id);
        if (id_len == 0) {
            err = { mcp::ErrorCode::ValidationFailed, "each id is text of 1..128 bytes", "invalid_id" };
            return false;
        }
        abi::DocRead r { reinterpret_cast<uint64_t>(text),
                         docs::kMaxText,
                         reinterpret_cast<uint64_t>(meta),
                         docs::kMaxMetadata,
                         0,
                         0,
                         0 };
        const int64_t rc = sys::doc_get(ctx.cap, id, id_len, &r);
        if (rc == -static_cast<int64_t>(ktl::Error::NotFound)) {
            (void)missing.add({ id, id_len }); // (room for every id a call may name)
            continue;
        }
        if (rc < 0) {
            err = docs::error_of(rc);
            return false;
        }
        const std::string_view body(text, r.text_length);
        const size_t overhead = docs::result_overhead({ id, id_len }, { meta, r.metadata_length }) + 64;
        if (left < overhead + 64) { // (its id is not in `missing`: `incomplete` says so)
            incomplete = true;
            break;
        }
        const size_t want = docs::json_string_bytes(body);
        const size_t room = want < left - overhead ? want : left - overhead;
        left -= overhead + room;
        w.begin_object().key("id").string({ id, id_len }).key("text");
        const bool cut = docs::write_text(w, body, room);
        w.key("metadata");
        docs::write_metadata(w, { meta, r.metadata_length });
        w.key("text_bytes").number(r.text_length);
        if (cut)
            w.key("truncated").boolean(true);
        char node[mcp::kProvenanceIdText];
        mcp::format_provenance_id(r.provenance, node);
        w.key("provenance_node_id").string(node).end_object();
    }
    w.end_array().key("missing").begin_array();
    if (missing.count() > 0) {
        auto list = text::IdList::parse(missing_list.first(missing.finish()));
        for (std::string_view id; list && list->next(id);)
            w.string(id);
    }
    w.end_array();
    if (incomplete)
        w.key("incomplete").boolean(true);
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = { "document_get",
                              "Read stored documents by id",
                              "The whole text and metadata of each document named, and the ids not stored.",
                              kGetIn,
                              kGetOut,
                              mcp::kVectorRead,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "read",
                              "collection" };

} // namespace

MCPD_TOOL(document_get) { kTool, run, Grant::Collection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

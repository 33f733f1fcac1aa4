// document_delete: removes documents by id, all as one change. Its token grants the collection,
// write only. The sink policy steps up a bulk delete (over the rules' threshold) as for vectors.
#include "document_family.h"
#include "../tool_def.h"
#include "../vector/vector_family.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>
#include <text/doc_batch.h>

namespace mcpd::tools {
namespace {

constexpr size_t kMaxIds = 1024;
constexpr size_t kListBytes = text::kIdListHeader + kMaxIds * (1 + docs::kMaxId);

constexpr const char* kDeleteIn = R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
                                  R"("ids":{"type":"array","minItems":1,"maxItems":1024,"items":)" DOC_ID_SCHEMA
                                  R"(}},)"
                                  R"("required":["collection","ids"],"additionalProperties":false})";
constexpr const char* kDeleteOut =
    R"({"type":"object","properties":{"deleted":{"type":"integer"},"missing":{"type":"array","items":{"type":"string"}}},)"
    R"("required":["deleted","missing"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    vec::Scratch mem(kListBytes + kMaxIds);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the ids", "no_memory" };
        return false;
    }
    auto* list = mem.as<std::byte>();
    auto* missing = mem.as<bool>(kListBytes);
    text::IdListWriter writer({ list, kListBytes });
    for (json::Value v = args.find("ids").first(); v.valid(); v = v.next_sibling()) {
        char id[docs::kMaxId];
        const size_t id_len = docs::string_arg(v, id);
        if (id_len == 0 || !writer.add({ id, id_len })) {
            err = { mcp::ErrorCode::ValidationFailed, "ids: 1..1,024 ids of 1..128 bytes", "invalid_ids" };
            return false;
        }
    }
    const size_t bytes = writer.finish();
    // All the ids as one change: a durable collection logs them as one record.
    const int64_t rc = sys::doc_delete(ctx.cap, list, bytes, missing);
    if (rc < 0) {
        err = docs::error_of(rc);
        return false;
    }
    w.begin_object().key("deleted").number(static_cast<uint64_t>(rc)).key("missing").begin_array();
    auto ids = text::IdList::parse({ list, bytes });
    std::string_view id;
    for (uint32_t i = 0; ids && ids->next(id); ++i)
        if (missing[i])
            w.string(id);
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = { "document_delete",
                              "Delete stored documents by id",
                              "Deletes the documents named; they are never found again. Ids not stored are listed.",
                              kDeleteIn,
                              kDeleteOut,
                              mcp::kVectorWrite,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "delete",
                              "collection" };

} // namespace

MCPD_TOOL(document_delete) { kTool, run, Grant::Collection, abi::kWrite, Effect::deletes_ids() };

} // namespace mcpd::tools

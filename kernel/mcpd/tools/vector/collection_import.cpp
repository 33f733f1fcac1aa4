// collection_import (and collection_export): a collection's snapshot (lib/hnsw/snapshot.cpp:
// versioned, CRC-checked sections) for backup, as base64 through tool calls. Export is paged,
// since a result is capped at 64 KiB, and each page is built alone (Index::save_range): any
// collection the store allows can be exported in pages of the same cost. Each page carries the
// snapshot's size and the collection's write generation, so a client can tell that the pages it
// joined belong to one snapshot, and its own CRC-32. Import takes the snapshot in one call or in
// chunks (the line's 1 MiB bounds a call) staged by the store; the kernel checks it whole before
// a collection exists.
#include "vector_family.h"
#include "../tool_def.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <hnsw/crc32.h>
#include <ktl/base64.h>
#include <mcp/policy/provenance.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

using namespace vec;

constexpr const char* kImportIn =
    R"({"type":"object","properties":{"name":)" NAME_SCHEMA R"(,)"
    R"("snapshot_b64":{"type":"array","minItems":1,"maxItems":64,"items":{"type":"string","maxLength":65536},)"
    R"("description":"the snapshot, or the next chunk of it, as base64 strings decoded one after the other"},)"
    R"("size":{"type":"integer","minimum":1,"maximum":68157440,"description":"the whole snapshot's size"},)"
    R"("offset":{"type":"integer","minimum":0,"maximum":68157440,"description":"where this chunk starts: 0 first, then the next of the previous answer"},)"
    R"("crc32":{"type":"integer","minimum":0,"maximum":4294967295},)"
    R"("max_elements":{"type":"integer","minimum":1,"maximum":1000000,"description":"the new collection's capacity (at least the snapshot's slots); default: twice its slots, at least 1024, never more than the snapshot declares"}},)"
    R"("required":["name","snapshot_b64","size"],"additionalProperties":false})";
constexpr const char* kImportOut =
    R"({"type":"object","properties":{"imported":{"type":"string"},"name":{"type":"string"},)"
    R"("size":{"type":"integer"},"received":{"type":"integer"},"next":{"type":"integer"},)"
    R"("max_elements":{"type":"integer"},"provenance_node_id":{"type":"string","description":"the import's node: what the imported vectors remember"}},"required":["size"]})";

// One call with the whole snapshot, or several in order (offset 0 first, each at the bytes
// received so far; the line's 1 MiB bounds one call): staged by the store, loaded when all is in.
bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("name").plain_string();
    uint64_t size = args.find("size").as_uint64().value_or(0);
    uint64_t offset = args.find("offset").as_uint64().value_or(0);
    json::Value parts = args.find("snapshot_b64");
    if (!name || !abi::valid_collection_name(*name)) {
        err = { mcp::ErrorCode::ValidationFailed, "name: letters, digits, _ - . only, not only dots", "invalid_name" };
        return false;
    }
    uint64_t total = 0;
    for (json::Value p = parts.first(); p.valid(); p = p.next_sibling()) {
        auto text = p.plain_string();
        if (!text || !ktl::Base64Reader(*text).decoded_size()) {
            err = { mcp::ErrorCode::ValidationFailed, "each snapshot_b64 string must be padded base64",
                    "invalid_base64" };
            return false;
        }
        total += ktl::Base64Reader(*text).decoded_size();
    }
    if (size == 0 || offset + total > size || (offset + total < size && total == 0)) {
        err = { mcp::ErrorCode::ValidationFailed, "snapshot_b64 does not fit size bytes at offset", "size_mismatch" };
        return false;
    }
    Scratch mem(total);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the chunk", "no_memory" };
        return false;
    }
    auto* bytes = mem.as<uint8_t>();
    uint64_t at = 0;
    for (json::Value p = parts.first(); p.valid(); p = p.next_sibling()) {
        auto n = ktl::base64_decode(*p.plain_string(), { bytes + at, total - at });
        if (!n) {
            err = { mcp::ErrorCode::ValidationFailed, "snapshot_b64 is not valid base64", "invalid_base64" };
            return false;
        }
        at += *n;
    }
    auto stage = [&](uint32_t action, abi::StageChunk& chunk) {
        chunk.total = size;
        chunk.offset = offset;
        chunk.data = reinterpret_cast<uint64_t>(bytes);
        chunk.len = action == 0 ? total : 0;
        chunk.action = action;
        return sys::store_stage(ctx.cap, name->data(), name->size(), &chunk);
    };
    abi::StageChunk chunk {};
    int64_t rc = stage(0, chunk);
    if (rc < 0) {
        err = rc == -static_cast<int64_t>(ktl::Error::OutOfRange)
                  ? mcp::ToolError { mcp::ErrorCode::ValidationFailed, "chunks must come in order from offset 0",
                                     "out_of_order" }
              : rc == -static_cast<int64_t>(ktl::Error::NotFound)
                  ? mcp::ToolError { mcp::ErrorCode::ValidationFailed,
                                     "no import of that name in progress: start at offset 0", "no_import" }
                  : error_of(rc);
        return false;
    }
    if (chunk.received_out < size) {
        w.begin_object().key("name").string(*name).key("size").number(size).key("received").number(chunk.received_out);
        w.key("next").number(chunk.received_out).end_object();
        return true;
    }
    abi::StageChunk done {};
    json::Value crc = args.find("crc32");
    if (crc.valid() && crc.as_uint64().value_or(~0ull) != chunk.crc_out) {
        stage(2, done);
        err = { mcp::ErrorCode::ValidationFailed, "the snapshot's CRC-32 does not match", "crc_mismatch" };
        return false;
    }
    done.capacity = args.find("max_elements").as_uint64().value_or(0);
    done.provenance = ctx.provenance(); // the imported vectors remember this import
    int64_t capacity = stage(1, done);  // committed: the collection's capacity
    if (capacity < 0) {
        err = capacity == -static_cast<int64_t>(ktl::Error::OutOfRange)
                  ? mcp::ToolError { mcp::ErrorCode::ValidationFailed,
                                     "max_elements is below the slots the snapshot uses", "capacity_too_small" }
                  : error_of(capacity);
        return false;
    }
    char node[mcp::kProvenanceIdText];
    mcp::format_provenance_id(ctx.provenance(), node);
    w.begin_object()
        .key("imported")
        .string(*name)
        .key("size")
        .number(size)
        .key("max_elements")
        .number(static_cast<uint64_t>(capacity));
    w.key("provenance_node_id").string(node).end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "collection_import",
    "Import a collection snapshot",
    "A new collection from a snapshot (base64 strings, checked whole: CRCs, structure, parameters) under a new name; "
    "a large one in chunks, in order from offset 0, each answered with the next offset until it is imported. "
    "Its memory follows what the snapshot holds unless max_elements asks for more.",
    kImportIn,
    kImportOut,
    mcp::kVectorAdmin,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "import",
    "name"
};

} // namespace

// Ungated: it only ever makes a new collection (under a name not taken) from a snapshot; no sink
// class of the policy covers it, so it is never stepped up (as before tools were declared here).
MCPD_TOOL(collection_import) { kTool, run, Grant::Store, abi::kImport, Effect::ungated() };

} // namespace mcpd::tools

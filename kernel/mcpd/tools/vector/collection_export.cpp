// collection_export (and collection_import): a collection's snapshot (lib/hnsw/snapshot.cpp:
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

constexpr const char* kExportIn =
    R"({"type":"object","properties":{"collection":)" NAME_SCHEMA R"(,)"
    R"("offset":{"type":"integer","minimum":0,"maximum":134217728,"description":"first byte of this page, default 0"},)"
    R"("length":{"type":"integer","minimum":1,"maximum":45000,"description":"bytes in this page, default 45000"}},)"
    R"("required":["collection"],"additionalProperties":false})";
constexpr const char* kExportOut =
    R"({"type":"object","properties":{"collection":{"type":"string"},"size":{"type":"integer"},)"
    R"("generation":{"type":"integer"},"offset":{"type":"integer"},"length":{"type":"integer"},)"
    R"("next":{"type":"integer"},"page_crc32":{"type":"integer"},"data":{"type":"string"}},)"
    R"("required":["size","generation","offset","length","next","page_crc32","data"]})";

constexpr uint64_t kMaxPage = 45000; // bytes per export page: 60,000 base64 characters

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    // The size first: asking for it keeps background linking off the collection (vec_export), so
    // the generation read next holds for this page and the ones that follow soon after.
    int64_t size = sys::vec_export(ctx.cap, nullptr, 0, 0);
    if (size <= 0) {
        err = size < 0 ? error_of(size) : mcp::ToolError { mcp::ErrorCode::InternalError, "empty snapshot" };
        return false;
    }
    abi::VectorStats before {}, after {};
    if (int64_t rc = sys::vec_stats(ctx.cap, &before); rc < 0) {
        err = error_of(rc);
        return false;
    }
    uint64_t offset = args.find("offset").as_uint64().value_or(0);
    uint64_t length = args.find("length").as_uint64().value_or(kMaxPage);
    if (offset > static_cast<uint64_t>(size) || length == 0 || length > kMaxPage) {
        err = { mcp::ErrorCode::ValidationFailed, "offset past the snapshot or length outside 1..45,000",
                "out_of_range" };
        return false;
    }
    if (length > static_cast<uint64_t>(size) - offset)
        length = static_cast<uint64_t>(size) - offset;
    // Only this page is built: memory and time in proportion to the page, whatever the size.
    Scratch mem(length + ktl::base64_size(length) + 1);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the page", "no_memory" };
        return false;
    }
    auto* bytes = mem.as<uint8_t>();
    int64_t written = length ? sys::vec_export(ctx.cap, bytes, length, offset) : 0;
    if (written < 0) {
        err = error_of(written);
        return false;
    }
    if (sys::vec_stats(ctx.cap, &after) < 0 || after.writes != before.writes ||
        after.link_slices != before.link_slices || static_cast<uint64_t>(written) != length) {
        err = { mcp::ErrorCode::InternalError, "the collection changed during the export", "changed" };
        return false;
    }
    auto* text = mem.as<char>(static_cast<size_t>(length));
    size_t n = ktl::base64_encode(bytes, length, text);
    w.begin_object().key("collection").string(args.find("collection").plain_string().value_or(""));
    // (Background linking after a boot changes the pages, not the contents: it moves the generation.)
    w.key("size").number(static_cast<uint64_t>(size)).key("generation").number(before.writes + before.link_slices);
    w.key("offset").number(offset).key("length").number(length).key("next").number(offset + length);
    w.key("page_crc32").number(uint64_t(hnsw::crc32(0, bytes, length)));
    w.key("data").string({ text, n }).end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "collection_export",
    "Export a collection snapshot",
    "One page (<= 45,000 bytes, base64) of the collection's CRC-checked snapshot, with the snapshot's size, the "
    "collection's write generation (the same on every page of one snapshot) and the page's CRC-32.",
    kExportIn,
    kExportOut,
    mcp::kVectorRead,
    nullptr,
    mcp::ToolResult::Structured,
    0,
    "read",
    "collection"
};

} // namespace

MCPD_TOOL(collection_export) { kTool, run, Grant::Collection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools

// collection_export and collection_import: a collection's snapshot (lib/hnsw/snapshot.cpp:
// versioned, CRC-checked sections) for backup, as base64 through tool calls. Export is paged,
// since a result is capped at 64 KiB: each page carries the whole snapshot's size and CRC-32, so
// a client can tell that the pages it joined belong to one snapshot (a write in between changes
// the CRC). Import takes the whole snapshot in one call (the line's 1 MiB bounds it) and the
// kernel checks it fully before a collection exists.
#include "vector_support.h"

#include "../syscall/sys.h"
#include "../vector/store.h"

#include <hnsw/crc32.h>
#include <ktl/base64.h>

namespace mcpd::vec {
namespace {

constexpr uint64_t kMaxPage = 45000; // bytes per export page: 60,000 base64 characters

} // namespace

bool export_snapshot(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    int64_t size = sys::call(sys::Number::vec_export, ctx.cap, 0, 0);
    if (size <= 0) {
        err = size < 0 ? error_of(size) : mcp::ToolError { mcp::ErrorCode::InternalError, "empty snapshot" };
        return false;
    }
    uint64_t offset = args.find("offset").as_uint64().value_or(0);
    uint64_t length = args.find("length").as_uint64().value_or(kMaxPage);
    if (offset > static_cast<uint64_t>(size) || length == 0 || length > kMaxPage) {
        err = { mcp::ErrorCode::ValidationFailed, "offset past the snapshot or length outside 1..45,000", "out_of_range" };
        return false;
    }
    if (length > static_cast<uint64_t>(size) - offset)
        length = static_cast<uint64_t>(size) - offset;
    Scratch mem(static_cast<size_t>(size) + ktl::base64_size(length));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the snapshot", "no_memory" };
        return false;
    }
    auto* bytes = mem.as<uint8_t>();
    int64_t written = sys::call(sys::Number::vec_export, ctx.cap, reinterpret_cast<uint64_t>(bytes), static_cast<uint64_t>(size));
    if (written != size) { // a write between the two calls changed the size: the client retries
        err = written < 0 ? error_of(written)
                          : mcp::ToolError { mcp::ErrorCode::InternalError, "the collection changed during the export", "changed" };
        return false;
    }
    auto* text = mem.as<char>(static_cast<size_t>(size));
    size_t n = ktl::base64_encode(bytes + offset, length, text);
    w.begin_object().key("collection").string(args.find("collection").plain_string().value_or(""));
    w.key("size").number(static_cast<uint64_t>(size)).key("crc32").number(hnsw::crc32(0, bytes, static_cast<size_t>(size)));
    w.key("offset").number(offset).key("length").number(length).key("next").number(offset + length);
    w.key("data").string({ text, n }).end_object();
    return true;
}

bool import_snapshot(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("name").plain_string();
    uint64_t size = args.find("size").as_uint64().value_or(0);
    json::Value parts = args.find("snapshot_b64");
    if (!name || !vector::valid_name(*name)) {
        err = { mcp::ErrorCode::ValidationFailed, "name: letters, digits, _ - . only, not only dots", "invalid_name" };
        return false;
    }
    uint64_t total = 0;
    for (json::Value p = parts.first(); p.valid(); p = p.next_sibling()) {
        auto text = p.plain_string();
        if (!text || !ktl::Base64Reader(*text).decoded_size()) {
            err = { mcp::ErrorCode::ValidationFailed, "each snapshot_b64 string must be padded base64", "invalid_base64" };
            return false;
        }
        total += ktl::Base64Reader(*text).decoded_size();
    }
    if (size == 0 || total != size) {
        err = { mcp::ErrorCode::ValidationFailed, "snapshot_b64 does not decode to size bytes", "size_mismatch" };
        return false;
    }
    Scratch mem(size);
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the snapshot", "no_memory" };
        return false;
    }
    auto* bytes = mem.as<uint8_t>();
    uint64_t at = 0;
    for (json::Value p = parts.first(); p.valid(); p = p.next_sibling()) {
        ktl::Base64Reader r(*p.plain_string());
        size_t want = r.decoded_size();
        if (r.read(bytes + at, want) != want || r.failed()) {
            err = { mcp::ErrorCode::ValidationFailed, "snapshot_b64 is not valid base64", "invalid_base64" };
            return false;
        }
        at += want;
    }
    json::Value crc = args.find("crc32");
    if (crc.valid() && crc.as_uint64().value_or(~0ull) != hnsw::crc32(0, bytes, size)) {
        err = { mcp::ErrorCode::ValidationFailed, "the snapshot's CRC-32 does not match", "crc_mismatch" };
        return false;
    }
    int64_t rc = sys::call(sys::Number::store_import, ctx.cap, reinterpret_cast<uint64_t>(name->data()), name->size(),
                           reinterpret_cast<uint64_t>(bytes), size);
    if (rc < 0) {
        err = error_of(rc);
        return false;
    }
    w.begin_object().key("imported").string(*name).key("size").number(size).end_object();
    return true;
}

} // namespace mcpd::vec

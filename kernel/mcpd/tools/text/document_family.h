#pragma once
// Document collections as MCP tools (issue 37; docs/documents.md): document_upsert / _search /
// _get / _delete, one file each, each call's token granting the one collection it names. What
// they share: the id schema, ids read from arguments, texts put into a result within its budget
// (a call's result is at most 64 KiB), metadata written back and matched against a filter.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <json/json.h>
#include <json/writer.h>
#include <mcp/server/server.h>

#include "../../tool_exec.h"

#define DOC_ID_SCHEMA \
    R"({"type":"string","minLength":1,"maxLength":128,"description":"the document's id: any text of 1..128 bytes"})"
#define DOC_METADATA_SCHEMA \
    R"({"type":"object","additionalProperties":{"type":["string","number"],"maxLength":1024,"minimum":-1e308,"maximum":1e308},)" \
    R"("description":"flat: strings and numbers only, 4 KiB at most as JSON"})"

namespace mcpd::docs {

constexpr size_t kMaxId = 128;
constexpr size_t kMaxText = 65536;
constexpr size_t kMaxMetadata = 4096;

// A string argument (escapes decoded) into out: its bytes, or 0 when it is not a string that fits.
size_t string_arg(const json::Value& v, std::span<char> out);

// Writes `text` as a JSON string of at most `budget` bytes (escapes counted): cut at a UTF-8
// boundary when longer. True when it was cut.
bool write_text(json::Writer& w, std::string_view text, size_t budget);
// Bytes `text` takes as a JSON string (quotes and escapes counted).
size_t json_string_bytes(std::string_view text);
// A call's room for results: its output limit, less what the envelope around them takes.
size_t result_room(const ToolContext& ctx);
// What a result takes besides its text: its id, its metadata (as write_metadata writes it, at
// most twice its stored text), keys and punctuation.
size_t result_overhead(std::string_view id, std::string_view metadata);

// Stored metadata (the object's JSON text as the caller sent it) written back as an object; {} for
// none or for text that does not parse (a log damaged past its checksums: never passed on as is).
void write_metadata(json::Writer& w, std::string_view metadata);
// Whether stored metadata has every member of `filter` (an object of strings and numbers) with an
// equal value (strings equal after unescaping, numbers equal as doubles).
bool metadata_matches(std::string_view metadata, const json::Value& filter);

// doc_* results as envelope errors (the vector store's, and the collection's kind).
mcp::ToolError error_of(int64_t rc);

} // namespace mcpd::docs

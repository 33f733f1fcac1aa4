#pragma once
// Input schemas read once instead of at every call (issue 34): a schema's text parsed into nodes
// kept for the life of its owner, and validate()'s schema pass done at that time, so checking a
// call's arguments is the instance pass alone. The outcome and the failure are validate()'s on the
// text, byte for byte, including for a schema that cannot be read (it still fails closed).
// No allocation: the nodes come from a fixed pool the set owns.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <json/json.h>
#include <mcp/schema/validator.h>

namespace mcp::schema {

// The nodes one schema may use: a text that needs more is no schema we serve (it fails closed),
// as it did when it was parsed per call into a buffer of this size.
constexpr size_t kMaxSchemaNodes = 512;

// One schema, compiled. Not copyable: its document points into the set's pool.
class Compiled {
public:
    Compiled() = default;
    Compiled(const Compiled&) = delete;
    Compiled& operator=(const Compiled&) = delete;

    // Reads `text` into `nodes`. False when it needs more nodes than it was given while fewer
    // than kMaxSchemaNodes were (nothing compiled: give it more). Otherwise true: compiled, as a
    // schema that validates, one validate() refuses (its failure kept), or an unreadable text.
    bool compile(const char* text, std::span<json::Node> nodes);
    // validate(schema, instance, out) as if `text` had just been parsed.
    bool validate(const json::Value& instance, Failure& out) const;

    const char* source() const { return m_source; }
    uint32_t nodes_used() const { return m_parsed ? m_doc.node_count() : 0; }

private:
    const char* m_source = nullptr; // the text compiled (nullptr: not yet)
    json::Document m_doc;
    bool m_parsed = false;    // the text is JSON that fits kMaxSchemaNodes
    bool m_schema_ok = false; // and passes the schema pass
    Failure m_refusal;        // what the schema pass refused it with
};

// Schemas by position (a tool's index in its server's list), compiled on first use into one pool.
class CompiledSet {
public:
    static constexpr size_t kMaxSchemas = 64;
    static constexpr size_t kPoolNodes = 2048;

    CompiledSet() = default;
    CompiledSet(const CompiledSet&) = delete;
    CompiledSet& operator=(const CompiledSet&) = delete;

    // The compiled form of `text`, schema number `index` (compiled now if it is not yet, or if
    // the text at that position changed); nullptr when it does not fit the set (the caller then
    // parses the text itself).
    const Compiled* get(size_t index, const char* text);
    size_t nodes_used() const { return m_used; }

private:
    Compiled m_schemas[kMaxSchemas];
    const char* m_unfit[kMaxSchemas] = {}; // texts the pool had no room left for
    json::Node m_pool[kPoolNodes];
    size_t m_used = 0; // nodes of the pool given out (never given back: a schema is compiled once)
};

} // namespace mcp::schema

#pragma once
// A strict RFC 8259 JSON reader for the kernel: one pass, no recursion (an explicit stack bounded
// by Limits::max_depth), no allocation (nodes go into a caller-provided array), UTF-8 validated,
// duplicate keys refused (a JSON-RPC message with two "id"s has no single meaning).
// Nodes are laid out in document order; a container's children follow it, and every node knows
// where its subtree ends, so navigation never searches.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <json/limits.h>
#include <ktl/result.h>

namespace json {

enum class Type : uint8_t { Null, Bool, Number, String, Array, Object };

enum class Reason : uint8_t {
    None,
    Empty,
    UnexpectedEnd,
    BadToken,
    BadNumber,
    BadString,
    BadEscape,
    BadUtf8,
    ControlCharacter,
    TooDeep,
    TooLong,
    TooManyMembers,
    TooManyItems,
    DuplicateKey,
    TrailingData,
    ArenaFull,
    TooComplex, // too many keys of one object share a hash (a crafted collision flood)
};
const char* reason_name(Reason reason);

struct ParseError {
    Reason reason = Reason::None;
    size_t offset = 0; // byte offset where it was detected
};

struct Node {
    Type type = Type::Null;
    bool flag = false; // Bool: the value; String/key: contains escapes
    bool key_escaped = false;
    uint32_t start = 0; // String: first byte after the quote; Number/Bool/Null: the literal
    uint32_t length = 0;
    uint32_t key_start = 0; // object members: the key (raw, between the quotes)
    uint32_t key_length = 0;
    uint32_t key_hash = 0; // FNV-1a of the unescaped key: duplicate checks compare hashes first
    uint32_t count = 0;    // Array/Object: direct children
    uint32_t end = 0;      // index one past this node's subtree
};

class Document;

// A cheap handle: a document and a node index.
class Value {
public:
    Value() = default;
    Value(const Document* doc, uint32_t index) : m_doc(doc), m_index(index) {}

    bool valid() const { return m_doc != nullptr; }
    Type type() const;
    bool is_null() const { return valid() && type() == Type::Null; }
    bool is_bool() const { return valid() && type() == Type::Bool; }
    bool is_number() const { return valid() && type() == Type::Number; }
    bool is_string() const { return valid() && type() == Type::String; }
    bool is_array() const { return valid() && type() == Type::Array; }
    bool is_object() const { return valid() && type() == Type::Object; }

    std::optional<bool> as_bool() const;
    // Exact: refuses fractions, exponents and out-of-range values.
    std::optional<int64_t> as_int64() const;
    std::optional<uint64_t> as_uint64() const;
    // Correctly rounded (strtod on the literal); refuses values that overflow to infinity.
    std::optional<double> as_double() const;
    std::optional<float> as_float() const;
    // The literal text of a number or literal, the raw (still escaped) text of a string, or the
    // whole source text of an array or object (brackets included).
    std::string_view raw() const;
    // The value's own JSON text as it stands in the source, strings with their quotes: what
    // re-parses to this value (raw() does not for strings).
    std::string_view json_text() const;
    // Unescaped string (or key) into out; returns the byte count, or Truncated / Corrupt.
    ktl::Result<size_t> string_into(std::span<char> out) const;
    // Zero-copy view when the string has no escapes; nullopt if it has (use string_into).
    std::optional<std::string_view> plain_string() const;
    // Compares the unescaped string with text (no buffer needed).
    bool string_equals(std::string_view text) const;

    uint32_t size() const;                        // children of an array/object
    Value at(uint32_t i) const;                   // array item (or object member value) by position
    Value find(std::string_view key) const;       // object member by unescaped key
    bool key_equals(std::string_view text) const; // for object members: compare this member's key
    ktl::Result<size_t> key_into(std::span<char> out) const;

    // Iteration over children: for (Value v = obj.first(); v.valid(); v = v.next_sibling())
    Value first() const;
    Value next_sibling() const; // only for children obtained from first()/next_sibling()/at()

    uint32_t index() const { return m_index; }
    // Nodes in this value's subtree, itself included (what Document::copy_of needs).
    uint32_t subtree_nodes() const;

private:
    const Node& node() const;
    const Document* m_doc = nullptr;
    uint32_t m_index = 0;
    uint32_t m_parent_end = 0; // set on children: where the parent's subtree ends
    friend class Document;
};

class Document {
public:
    // nodes: the arena (one node per value, including keys' values).
    static ktl::Result<Document> parse(std::string_view text, std::span<Node> nodes, const Limits& limits = {},
                                       ParseError* error = nullptr);
    // v (a value of another document) as a document of its own in the caller's buffers: its JSON
    // text (json_text()) copied into text, its subtree's nodes into nodes, offsets rebased onto
    // the copy. Document order makes the subtree one run of nodes whose offsets all fall within
    // that text, so the result is node for node what parse() of the copied text gives, without
    // reading the text again. Truncated when text is shorter than json_text() or nodes fewer
    // than subtree_nodes(); BadHandle for an invalid v.
    static ktl::Result<Document> copy_of(const Value& v, std::span<char> text, std::span<Node> nodes);
    Document() = default;
    Value root() const { return m_count ? Value(this, 0) : Value(); }
    // Whether this document is over exactly `text` (the same bytes in memory, not an equal copy),
    // its root's JSON text is the whole of it and its root's subtree all its nodes: what a holder
    // of a tree checks before it relies on the tree being the parse of that text.
    bool spans(std::string_view text) const;
    std::string_view text() const { return m_text; }
    uint32_t node_count() const { return m_count; }
    const Node& node(uint32_t i) const { return m_nodes[i]; }

private:
    std::string_view m_text;
    const Node* m_nodes = nullptr;
    uint32_t m_count = 0;
};

// At least as many nodes as any parse of text can use (every value but the root follows a '[', a
// ',' or a ':'), far fewer than text.size() / 2 for the usual arrays of numbers. Cheap: one scan.
size_t value_bound(std::string_view text);

// Decodes a raw (escaped) JSON string body into UTF-8. Truncated if out is too small,
// Corrupt for a bad escape or a lone surrogate.
ktl::Result<size_t> unescape(std::string_view raw, std::span<char> out);

} // namespace json

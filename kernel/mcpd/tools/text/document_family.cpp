#include "document_family.h"

#include "../vector/vector_family.h"
#include "../../tool_job.h"

namespace mcpd::docs {
namespace {

constexpr size_t kMetadataNodes = 1024; // a 4 KiB object has fewer values than that

// The stored metadata parsed (into a heap scratch: tool stacks are small).
class ParsedMetadata {
public:
    explicit ParsedMetadata(std::string_view text) : m_nodes(kMetadataNodes * sizeof(json::Node)) {
        if (!m_nodes.ok() || text.empty())
            return;
        auto doc = json::Document::parse(text, { m_nodes.as<json::Node>(), kMetadataNodes });
        if (doc && doc->root().is_object())
            m_doc = *doc;
    }
    json::Value root() const { return m_doc.root(); }

private:
    vec::Scratch m_nodes;
    json::Document m_doc;
};

size_t escaped_bytes(unsigned char c) {
    if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
        return 2;
    return c < 0x20 ? 6 : 1;
}

bool same_value(const json::Value& a, const json::Value& b) {
    if (a.is_string() && b.is_string()) {
        char x[1024], y[1024];
        auto nx = a.string_into(x), ny = b.string_into(y);
        return nx && ny && std::string_view(x, *nx) == std::string_view(y, *ny);
    }
    if (a.is_number() && b.is_number()) {
        auto x = a.as_double(), y = b.as_double();
        return x && y && *x == *y;
    }
    return false;
}

} // namespace

size_t string_arg(const json::Value& v, std::span<char> out) {
    if (!v.is_string())
        return 0;
    auto n = v.string_into(out);
    return n ? *n : 0;
}

size_t json_string_bytes(std::string_view text) {
    size_t n = 2;
    for (char c : text)
        n += escaped_bytes(static_cast<unsigned char>(c));
    return n;
}

size_t result_room(const ToolContext& ctx) {
    const size_t limit = ctx.job ? ctx.job->output_limit : 0;
    return limit > 2048 ? limit - 2048 : 0;
}

size_t result_overhead(std::string_view id, std::string_view metadata) {
    return json_string_bytes(id) + 2 * metadata.size() + 96;
}

bool write_text(json::Writer& w, std::string_view text, size_t budget) {
    size_t used = 2, cut = 0;
    while (cut < text.size()) {
        const size_t add = escaped_bytes(static_cast<unsigned char>(text[cut]));
        if (used + add > budget)
            break;
        used += add;
        ++cut;
    }
    const bool truncated = cut < text.size();
    // Back to the start of a UTF-8 sequence: never half a character.
    while (truncated && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut;
    w.string(text.substr(0, cut));
    return truncated;
}

void write_metadata(json::Writer& w, std::string_view metadata) {
    ParsedMetadata parsed(metadata);
    json::Value root = parsed.root();
    w.begin_object();
    for (json::Value v = root.first(); root.valid() && v.valid(); v = v.next_sibling()) {
        char key[256];
        auto k = v.key_into(key);
        if (!k || !(v.is_string() || v.is_number()))
            continue;
        w.key({ key, *k });
        if (v.is_number())
            w.raw(v.raw()); // (a number literal the parser accepted)
        else
            w.raw(v.json_text());
    }
    w.end_object();
}

bool metadata_matches(std::string_view metadata, const json::Value& filter) {
    if (!filter.is_object() || filter.size() == 0)
        return true;
    ParsedMetadata parsed(metadata);
    json::Value root = parsed.root();
    if (!root.valid())
        return false;
    for (json::Value want = filter.first(); want.valid(); want = want.next_sibling()) {
        char key[256];
        auto k = want.key_into(key);
        if (!k)
            return false;
        json::Value have = root.find({ key, *k });
        if (!have.valid() || !same_value(have, want))
            return false;
    }
    return true;
}

mcp::ToolError error_of(int64_t rc) {
    switch (static_cast<ktl::Error>(-rc)) {
    case ktl::Error::WrongType:
        return { mcp::ErrorCode::ValidationFailed,
                 "this collection holds vectors, not documents: use the vector_* tools on it, or create a document "
                 "collection (collection_create with kind \"documents\")",
                 "not_a_document_collection" };
    case ktl::Error::Unsupported:
        return { mcp::ErrorCode::Unavailable,
                 "semantic and hybrid search need the embedding model, and none is loaded on this appliance "
                 "(kernel://status: embedder): search with mode \"lexical\"",
                 "no_model" };
    case ktl::Error::Full:
        return { mcp::ErrorCode::InternalError,
                 "the collection is full (its documents, text or words: collection_stats shows which)",
                 "collection_full" };
    case ktl::Error::NotFound: return { mcp::ErrorCode::NotFound, "no such collection", "not_found" };
    default: return vec::error_of(rc);
    }
}

} // namespace mcpd::docs

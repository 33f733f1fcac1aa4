// Schemas read once (compiled.h). The failure a call sees is the one validate() gives on the
// text: for an unreadable text, SchemaUnsupported with nothing else said (the pipeline's own
// refusal of a schema it could not parse).
#include "compiled.h"

namespace mcp::schema {

bool Compiled::compile(const char* text, std::span<json::Node> nodes) {
    const bool room = nodes.size() >= kMaxSchemaNodes;
    json::ParseError error;
    auto doc = json::Document::parse(text ? std::string_view(text) : std::string_view(),
                                     nodes.first(room ? kMaxSchemaNodes : nodes.size()), {}, &error);
    if (!doc && !room && error.reason == json::Reason::ArenaFull)
        return false; // it might have fitted kMaxSchemaNodes: not ours to call unreadable
    m_source = text;
    m_parsed = bool(doc);
    m_refusal = Failure {};
    m_schema_ok = false;
    if (!m_parsed) {
        m_doc = json::Document();
        m_refusal.reason = Reason::SchemaUnsupported;
        return true;
    }
    m_doc = *doc;
    m_schema_ok = check_schema(m_doc.root(), m_refusal);
    return true;
}

bool Compiled::validate(const json::Value& instance, Failure& out) const {
    if (!m_schema_ok) {
        out = m_refusal;
        return false;
    }
    return validate_instance(m_doc.root(), instance, out);
}

const Compiled* CompiledSet::get(size_t index, const char* text) {
    if (index >= kMaxSchemas)
        return nullptr;
    Compiled& c = m_schemas[index];
    if (c.source() == text && text)
        return &c;
    if (m_unfit[index] == text && text)
        return nullptr; // known not to fit what is left: not tried again at every call
    // First use, or another text at this position (a server whose tools changed): compiled into
    // what is left of the pool; a replaced schema's nodes stay where they were.
    if (!c.compile(text, { m_pool + m_used, kPoolNodes - m_used })) {
        m_unfit[index] = text;
        return nullptr;
    }
    m_used += c.nodes_used();
    return &c;
}

} // namespace mcp::schema

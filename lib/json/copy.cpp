// Document::copy_of: a parsed value moved into buffers of its own without parsing it again.
#include "json.h"

namespace json {

uint32_t Value::subtree_nodes() const { return valid() ? node().end - m_index : 0; }

ktl::Result<Document> Document::copy_of(const Value& v, std::span<char> text, std::span<Node> nodes) {
    if (!v.valid())
        return ktl::Error::BadHandle;
    const std::string_view source = v.json_text();
    const uint32_t count = v.subtree_nodes();
    if (source.size() > text.size() || count > nodes.size())
        return ktl::Error::Truncated;
    // Every offset in the subtree is at or past the value's own first byte (its opening bracket,
    // the quote before a string) and within its text: rebasing is one subtraction per offset.
    const auto base = static_cast<uint32_t>(source.data() - v.m_doc->text().data());
    const uint32_t first = v.index();
    for (size_t i = 0; i < source.size(); ++i)
        text[i] = source[i];
    for (uint32_t i = 0; i < count; ++i) {
        Node n = v.m_doc->node(first + i);
        n.start -= base;
        n.end -= first;
        if (i == 0) {
            // The root of a parse is no member: its key fields are as parse() leaves them.
            n.key_start = n.key_length = n.key_hash = 0;
            n.key_escaped = false;
        } else if (n.key_start >= base) {
            // A member's key lies after its object's opening brace, so at or past base; an array
            // item's key_start is 0 and stays so (an empty key has a length of 0 but an offset).
            n.key_start -= base;
        }
        nodes[i] = n;
    }
    Document d;
    d.m_text = std::string_view(text.data(), source.size());
    d.m_nodes = nodes.data();
    d.m_count = count;
    return d;
}

bool Document::spans(std::string_view text) const {
    if (m_count == 0 || m_text.data() != text.data() || m_text.size() != text.size())
        return false;
    const std::string_view whole = root().json_text();
    return whole.data() == text.data() && whole.size() == text.size() && m_nodes[0].end == m_count;
}

} // namespace json

// Header and structure-block validation, token walking and tree navigation.
#include "dtb.h"
#include "format.h"

namespace dtb {
namespace {

// Byte loads: the blob may be read with strict alignment rules.
uint32_t be32(const uint8_t* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}
uint64_t be64(const uint8_t* p) { return (uint64_t(be32(p)) << 32) | be32(p + 4); }

// 64-bit so that a name or value ending near 4 GiB cannot wrap the next offset back to 0.
constexpr uint64_t align4(uint64_t v) { return (v + 3) & ~uint64_t(3); }

} // namespace

bool read_cells(std::span<const uint8_t> value, size_t cell_index, uint32_t cells, uint64_t& out) {
    if (cells == 0 || cells > 2 || cell_index > value.size() / 4)
        return false; // the second test keeps cell_index * 4 from overflowing
    size_t off = cell_index * 4;
    if (value.size() - off < cells * 4u)
        return false;
    out = cells == 1 ? be32(value.data() + off) : be64(value.data() + off);
    return true;
}

bool Blob::has_magic(const void* data) { return data && be32(static_cast<const uint8_t*>(data)) == kMagic; }

ktl::Result<Blob> Blob::create(const void* data, size_t available) {
    if (!data || available < kHeaderSize)
        return ktl::Error::Truncated;
    auto* p = static_cast<const uint8_t*>(data);
    if (be32(p + kHeaderMagic) != kMagic)
        return ktl::Error::Corrupt;
    // 64-bit from here on: offset + size sums of 32-bit fields cannot wrap.
    uint64_t total = be32(p + kHeaderTotalSize);
    uint64_t off_struct = be32(p + kHeaderOffStruct);
    uint64_t off_strings = be32(p + kHeaderOffStrings);
    uint64_t off_rsv = be32(p + kHeaderOffMemRsv);
    uint32_t version = be32(p + kHeaderVersion);
    uint32_t last_comp = be32(p + kHeaderLastCompVersion);
    uint64_t size_strings = be32(p + kHeaderSizeStrings);
    uint64_t size_struct = be32(p + kHeaderSizeStruct);
    if (total > available)
        return ktl::Error::Truncated;
    if (total < kHeaderSize || version < 16 || last_comp > 17)
        return ktl::Error::Corrupt;
    if (version < 17)
        size_struct = total > off_struct ? total - off_struct : 0;
    if ((off_struct & 3) || (off_rsv & 7) || off_struct < kHeaderSize || off_rsv < kHeaderSize ||
        off_strings < kHeaderSize)
        return ktl::Error::Corrupt;
    if (off_struct + size_struct > total || off_strings + size_strings > total || off_rsv + kReserveEntrySize > total ||
        size_struct < 8)
        return ktl::Error::Corrupt;
    Blob blob;
    blob.m_data = p;
    blob.m_total = total;
    blob.m_struct = p + off_struct;
    blob.m_struct_size = static_cast<uint32_t>(size_struct);
    blob.m_strings = p + off_strings;
    blob.m_strings_size = static_cast<uint32_t>(size_strings);
    blob.m_rsv_off = static_cast<uint32_t>(off_rsv);
    TRY_VOID(blob.validate_reservations());
    TRY_VOID(blob.validate_structure());
    return blob;
}

ktl::Result<void> Blob::validate_reservations() const {
    for (uint64_t off = m_rsv_off; off + kReserveEntrySize <= m_total; off += kReserveEntrySize) {
        if (be64(m_data + off) == 0 && be64(m_data + off + 8) == 0)
            return {};
    }
    return ktl::Error::Corrupt; // no terminating entry inside the blob
}

std::optional<Blob::Token> Blob::token_at(uint32_t off) const {
    if ((off & 3) || off > m_struct_size || m_struct_size - off < 4)
        return std::nullopt;
    Token t;
    t.tag = be32(m_struct + off);
    uint32_t body = off + 4;
    switch (t.tag) {
    case kTokenBeginNode: {
        uint32_t i = body;
        while (i < m_struct_size && m_struct[i] != 0)
            ++i;
        if (i >= m_struct_size)
            return std::nullopt; // unterminated name
        uint64_t next = align4(uint64_t(i) + 1);
        if (next > m_struct_size)
            return std::nullopt;
        t.name_off = body;
        t.name_len = i - body;
        t.next = static_cast<uint32_t>(next);
        return t;
    }
    case kTokenProp: {
        if (m_struct_size - body < 8)
            return std::nullopt;
        t.value_len = be32(m_struct + body);
        t.name_off = be32(m_struct + body + 4);
        t.value_off = body + 8;
        if (t.value_len > m_struct_size - t.value_off)
            return std::nullopt;
        uint64_t next = align4(uint64_t(t.value_off) + t.value_len);
        if (next > m_struct_size || t.name_off >= m_strings_size)
            return std::nullopt;
        t.next = static_cast<uint32_t>(next);
        return t;
    }
    case kTokenEndNode:
    case kTokenNop:
    case kTokenEnd: t.next = body; return t;
    default: return std::nullopt;
    }
}

std::string_view Blob::string_at(uint32_t nameoff) const {
    if (nameoff >= m_strings_size)
        return {};
    uint32_t i = nameoff;
    while (i < m_strings_size && m_strings[i] != 0)
        ++i;
    if (i >= m_strings_size)
        return {};
    return std::string_view(reinterpret_cast<const char*>(m_strings + nameoff), i - nameoff);
}

ktl::Result<void> Blob::validate_structure() {
    uint32_t off = skip_nops(0);
    auto first = token_at(off);
    if (!first || first->tag != kTokenBeginNode)
        return ktl::Error::Corrupt;
    m_root = off;
    size_t depth = 0;
    bool root_closed = false;
    // 5.4.2: a node's properties precede its children; property() and by_phandle() rely on it.
    bool props_allowed = false;
    // Every token advances by at least 4 bytes, so this loop ends within size/4 steps.
    while (off < m_struct_size) {
        auto t = token_at(off);
        if (!t)
            return ktl::Error::Corrupt;
        switch (t->tag) {
        case kTokenBeginNode:
            if (root_closed || ++depth > kMaxDepth)
                return ktl::Error::Corrupt;
            props_allowed = true;
            break;
        case kTokenEndNode:
            if (depth == 0)
                return ktl::Error::Corrupt;
            if (--depth == 0)
                root_closed = true;
            props_allowed = false;
            break;
        case kTokenProp: {
            if (depth == 0 || !props_allowed)
                return ktl::Error::Corrupt;
            // The name must be NUL-terminated inside the strings block.
            uint32_t i = t->name_off;
            while (i < m_strings_size && m_strings[i] != 0)
                ++i;
            if (i >= m_strings_size)
                return ktl::Error::Corrupt;
            break;
        }
        case kTokenNop: break;
        case kTokenEnd: return root_closed ? ktl::Result<void>() : ktl::Result<void>(ktl::Error::Corrupt);
        }
        off = t->next;
    }
    return ktl::Error::Truncated; // no kTokenEnd
}

uint32_t Blob::skip_nops(uint32_t off) const {
    while (off <= m_struct_size && m_struct_size - off >= 4 && be32(m_struct + off) == kTokenNop)
        off += 4;
    return off;
}

std::string_view Blob::name(Node node) const {
    auto t = token_at(node.offset);
    if (!t || t->tag != kTokenBeginNode)
        return {};
    return std::string_view(reinterpret_cast<const char*>(m_struct + t->name_off), t->name_len);
}

std::optional<uint32_t> Blob::skip_node(uint32_t begin) const {
    size_t depth = 0;
    uint32_t off = begin;
    while (off < m_struct_size) {
        auto t = token_at(off);
        if (!t)
            return std::nullopt;
        if (t->tag == kTokenBeginNode)
            ++depth;
        else if (t->tag == kTokenEndNode) {
            if (depth == 0)
                return std::nullopt;
            if (--depth == 0)
                return t->next;
        } else if (t->tag == kTokenEnd)
            return std::nullopt;
        off = t->next;
    }
    return std::nullopt;
}

std::optional<Node> Blob::first_child(Node node) const {
    auto t = token_at(node.offset);
    if (!t || t->tag != kTokenBeginNode)
        return std::nullopt;
    uint32_t off = t->next;
    while (off < m_struct_size) {
        auto c = token_at(off);
        if (!c)
            return std::nullopt;
        if (c->tag == kTokenBeginNode)
            return Node { off };
        if (c->tag != kTokenProp && c->tag != kTokenNop)
            return std::nullopt;
        off = c->next;
    }
    return std::nullopt;
}

std::optional<Node> Blob::next_sibling(Node node) const {
    if (node.offset == m_root)
        return std::nullopt;
    auto after = skip_node(node.offset);
    if (!after)
        return std::nullopt;
    uint32_t off = skip_nops(*after);
    auto t = token_at(off);
    if (t && t->tag == kTokenBeginNode)
        return Node { off };
    return std::nullopt;
}

std::optional<size_t> Blob::ancestors(Node node, Chain& chain) const {
    size_t depth = 0;
    uint32_t off = m_root;
    while (off < m_struct_size) {
        auto t = token_at(off);
        if (!t || t->tag == kTokenEnd)
            return std::nullopt;
        if (t->tag == kTokenBeginNode) {
            if (off == node.offset)
                return depth;
            if (depth >= kMaxDepth)
                return std::nullopt; // create() bounds the depth; stay safe regardless
            chain[depth++] = off;
        } else if (t->tag == kTokenEndNode) {
            if (depth == 0)
                return std::nullopt;
            --depth;
        }
        off = t->next;
    }
    return std::nullopt;
}

std::optional<Node> Blob::parent(Node node) const {
    Chain chain;
    auto depth = ancestors(node, chain);
    if (!depth || *depth == 0)
        return std::nullopt;
    return Node { chain[*depth - 1] };
}

std::optional<Node> Blob::next_node_in_order(uint32_t after) const {
    uint32_t off = after;
    if (auto t = token_at(off))
        off = t->next;
    else
        return std::nullopt;
    while (off < m_struct_size) {
        auto t = token_at(off);
        if (!t || t->tag == kTokenEnd)
            return std::nullopt;
        if (t->tag == kTokenBeginNode)
            return Node { off };
        off = t->next;
    }
    return std::nullopt;
}

std::optional<Property> Blob::property(Node node, std::string_view prop_name) const {
    auto t = token_at(node.offset);
    if (!t || t->tag != kTokenBeginNode)
        return std::nullopt;
    uint32_t off = t->next;
    while (off < m_struct_size) {
        auto p = token_at(off);
        if (!p || (p->tag != kTokenProp && p->tag != kTokenNop))
            return std::nullopt;
        if (p->tag == kTokenProp && string_at(p->name_off) == prop_name)
            return Property { string_at(p->name_off), std::span<const uint8_t>(m_struct + p->value_off, p->value_len) };
        off = p->next;
    }
    return std::nullopt;
}

} // namespace dtb

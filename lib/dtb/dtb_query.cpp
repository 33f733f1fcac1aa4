// Property-level queries: strings, compatible lists, phandles, paths and aliases, and the
// /chosen, /memory and /reserved-memory conveniences the boot path uses.
#include "dtb.h"
#include "format.h"
#include "text.h"

namespace dtb {
namespace {
constexpr size_t kMaxPathComponents = Blob::kMaxDepth;

std::string_view first_string(std::span<const uint8_t> v) {
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == 0)
            return std::string_view(reinterpret_cast<const char*>(v.data()), i);
    }
    return {};
}

// Devicetree Specification v0.4, 2.3.4: a node without `status` is enabled.
bool enabled(const Blob& blob, Node node) {
    auto status = blob.string(node, "status");
    return !status || *status == "okay" || *status == "ok";
}
} // namespace

std::optional<uint32_t> Blob::u32(Node node, std::string_view prop) const {
    auto p = property(node, prop);
    uint64_t v;
    if (!p || p->value.size() < 4 || !read_cells(p->value, 0, 1, v))
        return std::nullopt;
    return static_cast<uint32_t>(v);
}

std::optional<std::string_view> Blob::string(Node node, std::string_view prop) const {
    auto p = property(node, prop);
    if (!p || p->value.empty() || p->value.back() != 0)
        return std::nullopt; // must be NUL-terminated inside the value
    return first_string(p->value);
}

bool Blob::is_compatible(Node node, std::string_view compat) const {
    auto p = property(node, "compatible");
    if (!p)
        return false;
    size_t start = 0;
    for (size_t i = 0; i < p->value.size(); ++i) {
        if (p->value[i] == 0) {
            std::string_view s(reinterpret_cast<const char*>(p->value.data() + start), i - start);
            if (s == compat)
                return true;
            start = i + 1;
        }
    }
    return false;
}

std::optional<Node> Blob::find_compatible(std::string_view compat, std::optional<Node> after) const {
    std::optional<Node> n = after ? next_node_in_order(after->offset) : std::optional<Node>(root());
    while (n) {
        if (is_compatible(*n, compat))
            return n;
        n = next_node_in_order(n->offset);
    }
    return std::nullopt;
}

std::optional<Node> Blob::by_phandle(uint32_t phandle) const {
    if (phandle == 0 || phandle == 0xffffffff)
        return std::nullopt;
    // One pass over the tokens. Properties come before a node's children (checked by create()),
    // so a property belongs to the most recent FDT_BEGIN_NODE.
    uint32_t owner = m_root;
    for (uint32_t off = m_root; off < m_struct_size;) {
        auto t = token_at(off);
        if (!t || t->tag == kTokenEnd)
            break;
        if (t->tag == kTokenBeginNode) {
            owner = off;
        } else if (t->tag == kTokenProp && t->value_len == 4) {
            std::string_view prop = string_at(t->name_off);
            uint64_t v = 0;
            if ((prop == "phandle" || prop == "linux,phandle") &&
                read_cells(std::span<const uint8_t>(m_struct + t->value_off, 4), 0, 1, v) && v == phandle)
                return Node { owner };
        }
        off = t->next;
    }
    return std::nullopt;
}

// Follows "a/b@1/c" below start; a component without a unit address matches "name@...".
std::optional<Node> Blob::descend(Node start, std::string_view path) const {
    Node node = start;
    for (size_t steps = 0; !path.empty(); ++steps) {
        if (steps > kMaxPathComponents)
            return std::nullopt;
        while (!path.empty() && path.front() == '/')
            path.remove_prefix(1);
        if (path.empty())
            break;
        size_t end = text::index_of(path, '/');
        std::string_view comp = text::head(path, end);
        path = text::tail(path, end);
        std::optional<Node> match;
        for (auto c = first_child(node); c; c = next_sibling(*c)) {
            std::string_view nm = name(*c);
            if (nm == comp || (!text::contains(comp, '@') && text::head(nm, text::index_of(nm, '@')) == comp)) {
                match = c;
                break;
            }
        }
        if (!match)
            return std::nullopt;
        node = *match;
    }
    return node;
}

std::optional<Node> Blob::find(std::string_view path) const {
    if (path.empty())
        return std::nullopt;
    if (path.front() == '/')
        return descend(root(), path);
    // An alias, optionally followed by a path below it ("serial0", "soc/uart").
    size_t slash = text::index_of(path, '/');
    auto aliases = descend(root(), "aliases");
    if (!aliases)
        return std::nullopt;
    auto target = string(*aliases, text::head(path, slash));
    if (!target || target->empty() || target->front() != '/')
        return std::nullopt; // an alias must name an absolute path (no alias loops)
    auto base = descend(root(), *target);
    if (!base || slash == path.size())
        return base;
    return descend(*base, text::tail(path, slash));
}

size_t Blob::memory_ranges(std::span<Range> out) const {
    size_t count = 0;
    for (auto n = first_child(root()); n && count < out.size(); n = next_sibling(*n)) {
        auto type = string(*n, "device_type");
        if (!type || *type != "memory" || !enabled(*this, *n))
            continue;
        size_t regs = reg_count(*n);
        for (size_t i = 0; i < regs && count < out.size(); ++i) {
            auto r = reg(*n, i);
            if (r && r->size > 0)
                out[count++] = *r;
        }
    }
    return count;
}

size_t Blob::reserved_ranges(std::span<Range> out) const {
    // Every range is counted, those that fit are written: a caller that keeps fewer than there
    // are must know, since handing out reserved memory is not a recoverable mistake.
    size_t count = 0;
    auto add = [&](Range r) {
        if (count < out.size())
            out[count] = r;
        ++count;
    };
    for (uint64_t off = m_rsv_off; off + kReserveEntrySize <= m_total; off += kReserveEntrySize) {
        uint64_t addr = 0, size = 0;
        std::span<const uint8_t> entry(m_data + off, kReserveEntrySize);
        read_cells(entry, 0, 2, addr);
        read_cells(entry, 2, 2, size);
        if (addr == 0 && size == 0)
            break;
        add(Range { addr, size });
    }
    if (auto rm = find("/reserved-memory")) {
        for (auto n = first_child(*rm); n; n = next_sibling(*n)) {
            if (!enabled(*this, *n))
                continue;
            size_t regs = reg_count(*n);
            for (size_t i = 0; i < regs; ++i) {
                if (auto r = reg(*n, i))
                    add(*r);
            }
        }
    }
    return count;
}

std::string_view Blob::bootargs() const {
    auto chosen = find("/chosen");
    if (!chosen)
        return {};
    return string(*chosen, "bootargs").value_or(std::string_view());
}

std::optional<Range> Blob::initrd() const {
    auto chosen = find("/chosen");
    if (!chosen)
        return std::nullopt;
    auto cells = [&](std::string_view name) -> std::optional<uint64_t> {
        auto p = property(*chosen, name);
        uint64_t v = 0;
        if (!p || (p->value.size() != 4 && p->value.size() != 8) ||
            !read_cells(p->value, 0, static_cast<uint32_t>(p->value.size() / 4), v))
            return std::nullopt;
        return v;
    };
    const auto start = cells("linux,initrd-start"), end = cells("linux,initrd-end");
    if (!start || !end || *end <= *start)
        return std::nullopt;
    return Range { *start, *end - *start };
}

std::optional<Node> Blob::stdout_node() const {
    auto chosen = find("/chosen");
    if (!chosen)
        return std::nullopt;
    auto path = string(*chosen, "stdout-path");
    if (!path)
        path = string(*chosen, "linux,stdout-path");
    if (!path)
        return std::nullopt;
    std::string_view p = *path;
    p = text::head(p, text::index_of(p, ':')); // "serial0:115200n8"
    return find(p);
}

} // namespace dtb

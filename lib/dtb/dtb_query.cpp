// Property-level queries: strings, cells, reg with `ranges` translation, interrupts, and the
// /chosen, /memory and /reserved-memory conveniences the boot path uses.
#include "dtb.h"

namespace dtb {
namespace {
constexpr size_t kMaxPathComponents = 16;

std::string_view first_string(std::span<const uint8_t> v) {
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == 0)
            return std::string_view(reinterpret_cast<const char*>(v.data()), i);
    }
    return {};
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
    for (std::optional<Node> n = root(); n; n = next_node_in_order(n->offset)) {
        auto v = u32(*n, "phandle");
        if (!v)
            v = u32(*n, "linux,phandle");
        if (v && *v == phandle)
            return n;
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
        size_t end = path.find('/');
        std::string_view comp = path.substr(0, end);
        path = end == std::string_view::npos ? std::string_view() : path.substr(end);
        std::optional<Node> match;
        for (auto c = first_child(node); c; c = next_sibling(*c)) {
            std::string_view nm = name(*c);
            if (nm == comp || (comp.find('@') == std::string_view::npos && nm.substr(0, nm.find('@')) == comp)) {
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
    size_t slash = path.find('/');
    auto aliases = descend(root(), "aliases");
    if (!aliases)
        return std::nullopt;
    auto target = string(*aliases, path.substr(0, slash));
    if (!target || target->empty() || target->front() != '/')
        return std::nullopt; // an alias must name an absolute path (no alias loops)
    auto base = descend(root(), *target);
    if (!base || slash == std::string_view::npos)
        return base;
    return descend(*base, path.substr(slash));
}

uint32_t Blob::address_cells(Node bus) const { return u32(bus, "#address-cells").value_or(2); }
uint32_t Blob::size_cells(Node bus) const { return u32(bus, "#size-cells").value_or(1); }

size_t Blob::reg_count(Node node) const {
    auto p = property(node, "reg");
    auto bus = parent(node);
    if (!p || !bus)
        return 0;
    uint32_t per = address_cells(*bus) + size_cells(*bus);
    if (per == 0 || per > 8)
        return 0;
    return p->value.size() / (per * 4u);
}

ktl::Result<uint64_t> Blob::translate(Node bus, uint64_t addr) const {
    // Walk up through each bus: its `ranges` maps child addresses to its parent's space.
    for (size_t level = 0; level < kMaxDepth; ++level) {
        if (bus.offset == root().offset)
            return addr;
        auto up = parent(bus);
        if (!up)
            return ktl::Error::Corrupt;
        auto ranges = property(bus, "ranges");
        if (!ranges)
            return ktl::Error::NotFound; // not memory-mapped from the CPU's point of view
        if (!ranges->value.empty()) {
            uint32_t child_ac = address_cells(bus), parent_ac = address_cells(*up), sc = size_cells(bus);
            uint32_t per = child_ac + parent_ac + sc;
            if (child_ac == 0 || child_ac > 2 || parent_ac == 0 || parent_ac > 2 || sc == 0 || sc > 2)
                return ktl::Error::Unsupported;
            size_t entries = ranges->value.size() / (per * 4u);
            bool mapped = false;
            for (size_t i = 0; i < entries; ++i) {
                uint64_t child = 0, parent_addr = 0, size = 0;
                size_t cell = i * per;
                if (!read_cells(ranges->value, cell, child_ac, child) ||
                    !read_cells(ranges->value, cell + child_ac, parent_ac, parent_addr) ||
                    !read_cells(ranges->value, cell + child_ac + parent_ac, sc, size))
                    return ktl::Error::Corrupt;
                if (addr >= child && addr - child < size) {
                    addr = parent_addr + (addr - child);
                    mapped = true;
                    break;
                }
            }
            if (!mapped)
                return ktl::Error::NotFound;
        }
        bus = *up;
    }
    return ktl::Error::Corrupt;
}

ktl::Result<Range> Blob::reg(Node node, size_t index) const {
    auto p = property(node, "reg");
    auto bus = parent(node);
    if (!p || !bus)
        return ktl::Error::NotFound;
    uint32_t ac = address_cells(*bus), sc = size_cells(*bus);
    if (ac == 0 || ac > 2 || sc > 2)
        return ktl::Error::Unsupported;
    uint64_t addr = 0, size = 0;
    size_t cell = index * (ac + sc);
    if (!read_cells(p->value, cell, ac, addr))
        return ktl::Error::NotFound;
    if (sc > 0 && !read_cells(p->value, cell + ac, sc, size))
        return ktl::Error::NotFound;
    Range r;
    r.base = TRY(translate(*bus, addr));
    r.size = size;
    if (r.base + r.size < r.base)
        return ktl::Error::Corrupt;
    return r;
}

ktl::Result<Irq> Blob::interrupt(Node node, size_t index) const {
    auto p = property(node, "interrupts");
    if (!p)
        return ktl::Error::NotFound;
    // The interrupt parent is inherited from the nearest ancestor that names one.
    std::optional<Node> n = node;
    std::optional<uint32_t> parent_phandle;
    for (size_t level = 0; n && level < kMaxDepth && !parent_phandle; ++level) {
        parent_phandle = u32(*n, "interrupt-parent");
        n = parent(*n);
    }
    if (!parent_phandle)
        return ktl::Error::NotFound;
    auto controller = by_phandle(*parent_phandle);
    if (!controller)
        return ktl::Error::NotFound;
    uint32_t cells = u32(*controller, "#interrupt-cells").value_or(0);
    if (cells == 0 || cells > 4)
        return ktl::Error::Unsupported;
    size_t base = index * cells;
    uint64_t a = 0, b = 0, c = 0;
    if (!read_cells(p->value, base, 1, a))
        return ktl::Error::NotFound;
    Irq irq;
    irq.cells = cells;
    if (cells >= 3) {
        if (!read_cells(p->value, base + 1, 1, b) || !read_cells(p->value, base + 2, 1, c))
            return ktl::Error::Corrupt;
        irq.type = static_cast<uint32_t>(a);
        irq.number = static_cast<uint32_t>(b);
        irq.flags = static_cast<uint32_t>(c);
    } else {
        irq.number = static_cast<uint32_t>(a);
        if (cells == 2 && read_cells(p->value, base + 1, 1, b))
            irq.flags = static_cast<uint32_t>(b);
    }
    return irq;
}

size_t Blob::memory_ranges(std::span<Range> out) const {
    size_t count = 0;
    for (auto n = first_child(root()); n && count < out.size(); n = next_sibling(*n)) {
        auto type = string(*n, "device_type");
        if (!type || *type != "memory")
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
    size_t count = 0;
    for (uint64_t off = m_rsv_off; off + 16 <= m_total && count < out.size(); off += 16) {
        uint64_t addr = 0, size = 0;
        std::span<const uint8_t> entry(m_data + off, 16);
        read_cells(entry, 0, 2, addr);
        read_cells(entry, 2, 2, size);
        if (addr == 0 && size == 0)
            break;
        out[count++] = Range { addr, size };
    }
    if (auto rm = find("/reserved-memory")) {
        for (auto n = first_child(*rm); n && count < out.size(); n = next_sibling(*n)) {
            size_t regs = reg_count(*n);
            for (size_t i = 0; i < regs && count < out.size(); ++i) {
                if (auto r = reg(*n, i))
                    out[count++] = *r;
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
    p = p.substr(0, p.find(':')); // "serial0:115200n8"
    return find(p);
}

} // namespace dtb

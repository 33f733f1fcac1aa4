// Addresses and interrupts: #address-cells/#size-cells, `reg` translated through every
// ancestor's `ranges` (Devicetree Specification v0.4, 2.3.6-2.3.8), and `interrupts` decoded with
// the interrupt parent's #interrupt-cells (2.4).
#include "dtb.h"

namespace dtb {

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

ktl::Result<uint64_t> Blob::translate(const Chain& chain, size_t depth, uint64_t addr, uint64_t len) const {
    // Devicetree Specification v0.4, 2.3.8: each bus's `ranges` maps its child address space
    // into its parent's; an empty `ranges` is the identity, a missing one ends CPU visibility.
    // The whole of [addr, addr + len) must lie in one window: a region that runs past its window
    // would be mapped onto whatever follows the window's parent address.
    for (size_t level = depth; level > 1; --level) {
        Node bus { chain[level - 1] }, up { chain[level - 2] };
        auto ranges = property(bus, "ranges");
        if (!ranges)
            return ktl::Error::NotFound; // not memory-mapped from the CPU's point of view
        if (ranges->value.empty())
            continue;
        uint32_t child_ac = address_cells(bus), parent_ac = address_cells(up), sc = size_cells(bus);
        if (child_ac == 0 || child_ac > 2 || parent_ac == 0 || parent_ac > 2 || sc == 0 || sc > 2)
            return ktl::Error::Unsupported;
        uint32_t per = child_ac + parent_ac + sc;
        size_t entries = ranges->value.size() / (per * 4u);
        bool mapped = false;
        for (size_t i = 0; i < entries && !mapped; ++i) {
            uint64_t child = 0, parent_addr = 0, size = 0;
            size_t cell = i * per;
            if (!read_cells(ranges->value, cell, child_ac, child) ||
                !read_cells(ranges->value, cell + child_ac, parent_ac, parent_addr) ||
                !read_cells(ranges->value, cell + child_ac + parent_ac, sc, size))
                return ktl::Error::Corrupt;
            if (addr >= child && addr - child < size && len <= size - (addr - child)) {
                if (parent_addr + (addr - child) < parent_addr)
                    return ktl::Error::Corrupt; // window wraps past 2^64
                addr = parent_addr + (addr - child);
                mapped = true;
            }
        }
        if (!mapped)
            return ktl::Error::NotFound;
    }
    return addr;
}

ktl::Result<uint64_t> Blob::dma_address(Node node, uint64_t addr, uint64_t len) const {
    auto bus = parent(node);
    if (!bus)
        return ktl::Error::NotFound;
    auto ranges = property(*bus, "dma-ranges");
    if (!ranges || ranges->value.empty())
        return addr;
    auto up = parent(*bus);
    if (!up)
        return ktl::Error::NotFound;
    uint32_t child_ac = address_cells(*bus), parent_ac = address_cells(*up), sc = size_cells(*bus);
    if (child_ac == 0 || child_ac > 2 || parent_ac == 0 || parent_ac > 2 || sc == 0 || sc > 2)
        return ktl::Error::Unsupported;
    uint32_t per = child_ac + parent_ac + sc;
    size_t entries = ranges->value.size() / (per * 4u);
    for (size_t i = 0; i < entries; ++i) {
        uint64_t child = 0, cpu = 0, size = 0;
        size_t cell = i * per;
        if (!read_cells(ranges->value, cell, child_ac, child) ||
            !read_cells(ranges->value, cell + child_ac, parent_ac, cpu) ||
            !read_cells(ranges->value, cell + child_ac + parent_ac, sc, size))
            return ktl::Error::Corrupt;
        if (addr >= cpu && addr - cpu < size && len <= size - (addr - cpu)) {
            if (child + (addr - cpu) < child)
                return ktl::Error::Corrupt;
            return child + (addr - cpu);
        }
    }
    return ktl::Error::NotFound;
}

ktl::Result<Range> Blob::reg(Node node, size_t index) const {
    auto p = property(node, "reg");
    if (!p)
        return ktl::Error::NotFound;
    Chain chain;
    auto depth = ancestors(node, chain);
    if (!depth || *depth == 0)
        return ktl::Error::NotFound; // the root has no parent bus
    Node bus { chain[*depth - 1] };
    uint32_t ac = address_cells(bus), sc = size_cells(bus);
    if (ac == 0 || ac > 2 || sc > 2)
        return ktl::Error::Unsupported;
    if (index >= p->value.size() / ((ac + sc) * 4u))
        return ktl::Error::NotFound; // also keeps index * (ac + sc) from overflowing
    uint64_t addr = 0, size = 0;
    size_t cell = index * (ac + sc);
    if (!read_cells(p->value, cell, ac, addr))
        return ktl::Error::NotFound;
    if (sc > 0 && !read_cells(p->value, cell + ac, sc, size))
        return ktl::Error::NotFound;
    Range r;
    r.base = TRY(translate(chain, *depth, addr, size));
    r.size = size;
    if (r.base + r.size < r.base)
        return ktl::Error::Corrupt;
    return r;
}

ktl::Result<Irq> Blob::interrupt(Node node, size_t index) const {
    auto p = property(node, "interrupts");
    if (!p)
        return ktl::Error::NotFound;
    // 2.4.1: the interrupt parent is inherited from the nearest ancestor that names one.
    std::optional<uint32_t> parent_phandle = u32(node, "interrupt-parent");
    if (!parent_phandle) {
        Chain chain;
        auto depth = ancestors(node, chain);
        for (size_t level = depth.value_or(0); level > 0 && !parent_phandle; --level)
            parent_phandle = u32(Node { chain[level - 1] }, "interrupt-parent");
    }
    if (!parent_phandle)
        return ktl::Error::NotFound;
    auto controller = by_phandle(*parent_phandle);
    if (!controller)
        return ktl::Error::NotFound;
    uint32_t cells = u32(*controller, "#interrupt-cells").value_or(0);
    if (cells == 0 || cells > 4)
        return ktl::Error::Unsupported;
    if (index >= p->value.size() / (cells * 4u))
        return ktl::Error::NotFound;
    size_t base = index * cells;
    uint64_t a = 0, b = 0, c = 0;
    Irq irq;
    irq.cells = cells;
    read_cells(p->value, base, 1, a); // in range: index < entries
    if (cells >= 3) {
        read_cells(p->value, base + 1, 1, b);
        read_cells(p->value, base + 2, 1, c);
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

} // namespace dtb

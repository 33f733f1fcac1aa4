#pragma once
// Flattened device tree (Devicetree Specification v0.4, chapter 5) reader. Portable and
// allocation-free. create() validates the header and walks the whole structure block once, so
// later queries work on a well-formed blob; every query still bounds-checks what it reads.
// A Blob reads the caller's bytes in place: they must outlive it (and every Property/name view).
// Limits: #address-cells and #size-cells up to 2 for reg/ranges (PCI's 3 -> Unsupported); no
// interrupts-extended or interrupt-map; nesting depth kMaxDepth.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace dtb {

struct Node {
    uint32_t offset = 0; // of the FDT_BEGIN_NODE token within the structure block
};

struct Property {
    std::string_view name;
    std::span<const uint8_t> value;
};

struct Range {
    uint64_t base = 0;
    uint64_t size = 0;
};

// One `interrupts` entry. With a GIC parent (3 cells): type 0 = SPI, 1 = PPI. `cells` is the
// parent's #interrupt-cells; with fewer than 3 there is no type and intid() is the raw number.
struct Irq {
    uint32_t type = 0;
    uint32_t number = 0;
    uint32_t flags = 0;
    uint32_t cells = 3;
    // kInvalid when the number does not fit an interrupt ID (it would wrap to a small one).
    static constexpr uint32_t kInvalid = 0xffffffffu;
    uint32_t intid() const {
        if (cells < 3)
            return number;
        uint32_t base = type == 1 ? 16 : 32;
        return number > kInvalid - 1 - base ? kInvalid : number + base;
    }
};

class Blob {
public:
    static constexpr uint32_t kMagic = 0xd00dfeed;
    static constexpr size_t kMaxDepth = 32;
    static constexpr size_t kHeaderSize = 40;

    Blob() = default;
    static ktl::Result<Blob> create(const void* data, size_t available);
    static bool has_magic(const void* data);

    size_t total_size() const { return m_total; }
    Node root() const { return Node { m_root }; }

    std::optional<Node> find(std::string_view path) const;
    std::optional<Node> first_child(Node node) const;
    std::optional<Node> next_sibling(Node node) const;
    std::optional<Node> parent(Node node) const;
    std::string_view name(Node node) const;

    std::optional<Property> property(Node node, std::string_view name) const;
    std::optional<uint32_t> u32(Node node, std::string_view prop) const;
    std::optional<std::string_view> string(Node node, std::string_view prop) const;
    bool is_compatible(Node node, std::string_view compat) const;
    std::optional<Node> find_compatible(std::string_view compat, std::optional<Node> after = {}) const;
    std::optional<Node> by_phandle(uint32_t phandle) const;

    uint32_t address_cells(Node bus) const;
    uint32_t size_cells(Node bus) const;
    size_t reg_count(Node node) const;
    ktl::Result<Range> reg(Node node, size_t index) const;
    ktl::Result<Irq> interrupt(Node node, size_t index) const;
    // The address a DMA-capable device on node's bus uses for CPU physical address [addr, addr +
    // len): its bus's `dma-ranges` (2.3.9; missing or empty: the same address). NotFound when no
    // window holds the whole range (the device cannot reach that memory).
    ktl::Result<uint64_t> dma_address(Node node, uint64_t addr, uint64_t len) const;

    size_t memory_ranges(std::span<Range> out) const;
    // Memreserve entries and enabled /reserved-memory children: returns how many there are, and
    // writes the first out.size() of them.
    size_t reserved_ranges(std::span<Range> out) const;
    std::string_view bootargs() const;
    std::optional<Node> stdout_node() const;
    // What the boot loader loaded beside the kernel (/chosen linux,initrd-start and -end, one or two
    // cells each, end exclusive): the Pi's firmware puts an `initramfs` file of config.txt there.
    // Nothing when absent, malformed or empty.
    std::optional<Range> initrd() const;

private:
    struct Token {
        uint32_t tag = 0;
        uint32_t next = 0;      // offset of the following token
        uint32_t name_off = 0;  // BEGIN_NODE: name offset in struct block; PROP: name offset in strings
        uint32_t name_len = 0;  // BEGIN_NODE only
        uint32_t value_off = 0; // PROP: value offset in struct block
        uint32_t value_len = 0;
    };

    std::optional<Token> token_at(uint32_t offset) const;
    uint32_t skip_nops(uint32_t offset) const;
    std::optional<uint32_t> skip_node(uint32_t begin) const; // offset after the node's END_NODE
    std::optional<Node> next_node_in_order(uint32_t after) const;
    std::optional<Node> descend(Node start, std::string_view path) const;
    std::string_view string_at(uint32_t nameoff) const;
    ktl::Result<void> validate_structure();
    ktl::Result<void> validate_reservations() const;
    // Offsets of node's ancestors, root first, in one pass over the tokens. The count is 0 for
    // the root; nullopt when `node` is not a node of this tree.
    using Chain = uint32_t[kMaxDepth];
    std::optional<size_t> ancestors(Node node, Chain& chain) const;
    // Maps a child address of bus chain[depth - 1] up through every ancestor's `ranges`.
    ktl::Result<uint64_t> translate(const Chain& chain, size_t depth, uint64_t addr, uint64_t len) const;

    const uint8_t* m_data = nullptr;
    size_t m_total = 0;
    const uint8_t* m_struct = nullptr;
    uint32_t m_struct_size = 0;
    const uint8_t* m_strings = nullptr;
    uint32_t m_strings_size = 0;
    uint32_t m_rsv_off = 0;
    uint32_t m_root = 0;
};

// Reads a big-endian cell group (1 or 2 cells) from a property value; false if out of range.
bool read_cells(std::span<const uint8_t> value, size_t cell_index, uint32_t cells, uint64_t& out);

} // namespace dtb

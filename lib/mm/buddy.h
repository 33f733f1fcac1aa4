#pragma once
// Binary buddy allocator for physical pages (4 KiB). Hardware-free: it only does arithmetic on
// addresses and keeps its bookkeeping in a caller-supplied array, so the host tests run it
// against a reference model. The kernel feeds it the DTB's RAM ranges minus the image, the
// DTB, reserved memory and its own metadata.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace mm {

constexpr uint64_t kPageSize = 4096;
constexpr unsigned kPageShift = 12;

struct PageFrame {
    uint32_t next; // free-list links (page indices), kNone when absent
    uint32_t prev;
    uint8_t order;  // order of the block this page heads (free or allocated)
    uint8_t state;  // PageState
    uint16_t owner; // allocation owner tag (task id) for accounting
};

enum PageState : uint8_t { Reserved = 0, FreeHead = 1, AllocatedHead = 2, Tail = 3 };

struct BuddyStats {
    uint64_t total_pages = 0; // pages handed to the allocator (add_free_range)
    uint64_t free_pages = 0;
    uint64_t used_pages = 0;
    unsigned largest_free_order = 0; // valid when free_pages > 0
    uint64_t free_blocks[20] = {};   // per order
};

class BuddyAllocator {
public:
    static constexpr unsigned kMaxOrder = 19; // blocks up to 2 GiB
    static constexpr uint32_t kNone = 0xffffffffu;

    static constexpr size_t metadata_bytes(size_t pages) { return pages * sizeof(PageFrame); }

    // Manages [base, base + pages * 4 KiB). All pages start reserved.
    ktl::Result<void> init(uint64_t base, size_t pages, PageFrame* metadata, size_t metadata_len);
    // Releases the whole pages inside [addr, addr + size) to the allocator.
    void add_free_range(uint64_t addr, uint64_t size);

    ktl::Result<uint64_t> alloc(unsigned order, uint16_t owner = 0);
    // Frees a block returned by alloc with the same order. A wrong address, order or a double
    // free is refused with an error and changes nothing.
    ktl::Result<void> free(uint64_t addr, unsigned order);

    BuddyStats stats() const;
    uint64_t base() const { return m_base; }
    size_t pages() const { return m_pages; }
    bool owns(uint64_t addr) const { return addr >= m_base && (addr - m_base) >> kPageShift < m_pages; }
    // Pages allocated under owner and not freed. O(1) for owners below kCountedOwners (task ids,
    // checked as every task ends: a scan of every frame cost ~1 ms a tool call under QEMU TCG),
    // a scan of the frames for the others.
    uint64_t pages_owned_by(uint16_t owner) const;
    static constexpr uint16_t kCountedOwners = 256;

private:
    void push(unsigned order, uint32_t index);
    void unlink(unsigned order, uint32_t index);
    void free_block(uint32_t index, unsigned order);

    uint64_t m_base = 0;
    size_t m_pages = 0;
    PageFrame* m_frames = nullptr;
    uint32_t m_heads[kMaxOrder + 1] = {};
    uint64_t m_free_pages = 0;
    uint64_t m_total_pages = 0;
    uint64_t m_owned[kCountedOwners] = {}; // pages allocated per owner, owners below kCountedOwners
};

} // namespace mm

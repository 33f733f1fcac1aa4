#pragma once
// Kernel heap: size classes carved from single pages (slabs), larger requests as whole page
// blocks, every allocation charged to an owner (a task id) so a task's memory use is known and
// can be capped. Hardware-free: pages come from a PageSource (the buddy allocator in the
// kernel, aligned host memory in tests). Failure is an error to the caller, never a panic.
// Every slab page and every large block is on a list, so everything an owner holds can be found
// and freed when it dies (release_owner): a killed task leaks nothing and its id starts clean.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace mm {

class PageSource {
public:
    virtual ktl::Result<uint64_t> alloc_pages(unsigned order, uint16_t owner) = 0;
    virtual void free_pages(uint64_t addr, unsigned order) = 0;

protected:
    ~PageSource() = default;
};

struct HeapStats {
    uint64_t slab_pages = 0;
    uint64_t large_pages = 0;
    uint64_t live_allocations = 0;
    uint64_t bytes_requested = 0; // sum of live request sizes
    uint64_t failed = 0;
};

class Heap {
public:
    static constexpr size_t kMaxOwners = 256;
    // Gross slot sizes (header included); anything larger takes a block of whole pages.
    static constexpr size_t kNumClasses = 6;
    static constexpr size_t kClassSizes[kNumClasses] = { 32, 64, 128, 256, 512, 1024 };
    static constexpr size_t kHeaderSize = 16;
    static constexpr size_t kMaxSize = 64u << 20;

    explicit Heap(PageSource& pages) : m_pages(pages) {}

    // 16-byte aligned memory for `size` bytes charged to `owner`.
    ktl::Result<void*> alloc(size_t size, uint16_t owner);
    // Refuses pointers it did not hand out (bad magic) and double frees.
    ktl::Result<void> free(void* ptr);

    // Bytes charged to owner: gross (slot or block size), so caps reflect real consumption.
    uint64_t used_by(uint16_t owner) const { return owner < kMaxOwners ? m_used[owner] : 0; }
    // 0 = unlimited.
    void set_limit(uint16_t owner, uint64_t bytes) {
        if (owner < kMaxOwners)
            m_limit[owner] = bytes;
    }
    HeapStats stats() const { return m_stats; }

    struct Released {
        uint64_t allocations = 0;
        uint64_t bytes = 0; // gross, as used_by() counted them
    };
    // Frees everything charged to `owner` and clears its limit. O(slab pages + large blocks).
    Released release_owner(uint16_t owner);

    struct Slab;  // page header of a slab (heap.cpp)
    struct Large; // block header of a large allocation (heap.cpp)

private:
    static int class_for(size_t gross);
    ktl::Result<void*> alloc_small(int cls, uint16_t owner);
    ktl::Result<void*> alloc_large(size_t gross, uint16_t owner);
    bool charge(uint16_t owner, uint64_t bytes);

    void unlink_partial(Slab* slab);

    PageSource& m_pages;
    Slab* m_partial[kNumClasses] = {};
    Slab* m_slabs = nullptr;  // every slab page, full or not (release_owner walks them)
    Large* m_large = nullptr; // every large block
    uint64_t m_used[kMaxOwners] = {};
    uint64_t m_limit[kMaxOwners] = {};
    HeapStats m_stats;
};

} // namespace mm

#pragma once
// Physical memory: one buddy allocator per RAM range from the device tree, fed with every page
// that is not the kernel image, the DTB, reserved memory, the stack arena or its own metadata.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>
#include <mm/buddy.h>

namespace pmm {

struct Exclusion {
    uint64_t base;
    uint64_t size;
};

// metadata_area: RAM (mapped RW) large enough for metadata_bytes_needed().
ktl::Result<void> init(const uint64_t* ram_bases, const uint64_t* ram_sizes, size_t ranges, const Exclusion* excl,
                       size_t excl_count, uint64_t metadata_area, uint64_t metadata_size);
uint64_t metadata_bytes_needed(const uint64_t* ram_sizes, size_t ranges);

ktl::Result<uint64_t> alloc_pages(unsigned order, uint16_t owner);
// The smallest order whose block (4 KiB << order) holds `bytes`.
constexpr unsigned order_for(uint64_t bytes) {
    unsigned order = 0;
    while ((4096ull << order) < bytes && order < 63 - 12)
        ++order;
    return order;
}
void free_pages(uint64_t addr, unsigned order);

struct Stats {
    uint64_t total_pages;
    uint64_t free_pages;
    uint64_t used_pages;
    uint64_t largest_free_block; // bytes
};
Stats stats();
uint64_t pages_owned_by(uint16_t owner);

} // namespace pmm

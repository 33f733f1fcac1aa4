#include "pmm.h"

#include "../panic.h"

#include "../arch/aarch64/cpu.h"

namespace pmm {
namespace {

constexpr size_t kMaxRanges = 4;
constexpr size_t kMaxExclusions = 24;
mm::BuddyAllocator g_zones[kMaxRanges];
size_t g_zone_count = 0;

uint64_t page_align_up(uint64_t v) { return (v + mm::kPageSize - 1) & ~(mm::kPageSize - 1); }

} // namespace

uint64_t metadata_bytes_needed(const uint64_t* ram_sizes, size_t ranges) {
    uint64_t total = 0;
    for (size_t i = 0; i < ranges && i < kMaxRanges; ++i)
        total += page_align_up(mm::BuddyAllocator::metadata_bytes(ram_sizes[i] / mm::kPageSize));
    return total;
}

ktl::Result<void> init(const uint64_t* ram_bases, const uint64_t* ram_sizes, size_t ranges, const Exclusion* excl,
                       size_t excl_count, uint64_t metadata_area, uint64_t metadata_size) {
    if (ranges == 0 || metadata_size < metadata_bytes_needed(ram_sizes, ranges) || excl_count > kMaxExclusions)
        return ktl::Error::InvalidArgs; // never guess: an ignored exclusion would hand out reserved memory
    uint64_t meta = metadata_area;
    g_zone_count = 0;
    for (size_t r = 0; r < ranges && r < kMaxRanges; ++r) {
        uint64_t base = page_align_up(ram_bases[r]);
        size_t pages = (ram_sizes[r] - (base - ram_bases[r])) / mm::kPageSize;
        size_t bytes = mm::BuddyAllocator::metadata_bytes(pages);
        auto& zone = g_zones[g_zone_count++];
        TRY_VOID(zone.init(base, pages, reinterpret_cast<mm::PageFrame*>(meta), bytes));
        meta += page_align_up(bytes);
        // Release what lies between the exclusions, walking them in address order.
        Exclusion sorted[kMaxExclusions];
        size_t n = excl_count < kMaxExclusions ? excl_count : kMaxExclusions;
        for (size_t i = 0; i < n; ++i) {
            size_t j = i;
            for (; j > 0 && sorted[j - 1].base > excl[i].base; --j)
                sorted[j] = sorted[j - 1];
            sorted[j] = excl[i];
        }
        uint64_t cursor = base, end = base + pages * mm::kPageSize;
        for (size_t i = 0; i < n && cursor < end; ++i) {
            uint64_t es = sorted[i].base, ee = sorted[i].base + sorted[i].size;
            if (ee <= cursor)
                continue;
            if (es >= end)
                break;
            if (es > cursor)
                zone.add_free_range(cursor, es - cursor);
            cursor = ee;
        }
        if (cursor < end)
            zone.add_free_range(cursor, end - cursor);
    }
    return {};
}

ktl::Result<uint64_t> alloc_pages(unsigned order, uint16_t owner) {
    arch::IrqGuard guard;
    for (size_t i = 0; i < g_zone_count; ++i) {
        auto r = g_zones[i].alloc(order, owner);
        if (r)
            return r;
    }
    return ktl::Error::NoMemory;
}

void free_pages(uint64_t addr, unsigned order) {
    arch::IrqGuard guard;
    for (size_t i = 0; i < g_zone_count; ++i) {
        if (g_zones[i].owns(addr)) {
            // A refused free is a double free or a wrong order: memory is already inconsistent
            // (two owners would share pages), so stop here, naming who asked.
            if (auto r = g_zones[i].free(addr, order); !r)
                panic("pmm: free of 0x%llx (order %u) refused: double free or wrong order (caller %p)",
                      static_cast<unsigned long long>(addr), order, __builtin_return_address(0));
            return;
        }
    }
    panic("pmm: free of 0x%llx (order %u): not a page of any zone (caller %p)", static_cast<unsigned long long>(addr),
          order, __builtin_return_address(0));
}

Stats stats() {
    arch::IrqGuard guard;
    Stats s {};
    for (size_t i = 0; i < g_zone_count; ++i) {
        auto z = g_zones[i].stats();
        s.total_pages += z.total_pages;
        s.free_pages += z.free_pages;
        s.used_pages += z.used_pages;
        uint64_t largest = z.free_pages ? (mm::kPageSize << z.largest_free_order) : 0;
        if (largest > s.largest_free_block)
            s.largest_free_block = largest;
    }
    return s;
}

uint64_t pages_owned_by(uint16_t owner) {
    arch::IrqGuard guard;
    uint64_t n = 0;
    for (size_t i = 0; i < g_zone_count; ++i)
        n += g_zones[i].pages_owned_by(owner);
    return n;
}

} // namespace pmm

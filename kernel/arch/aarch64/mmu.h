#pragma once
// Stage-1 EL1 translation, identity mapped (VA == PA), 4 KiB granule, 39-bit VA (T0SZ = 25).
// Boot enables the MMU twice: first with an early table that maps only the image's own sections
// and the device tree as normal memory (text RX, rodata R, data RW+XN, stack guards unmapped)
// and everything else as device memory, so C++ and the DTB parser run with caches and
// unaligned accesses; then with the final table built from the device tree: RAM normal
// write-back, kernel text RX, rodata R, data/bss/stack/heap RW+XN, devices nGnRE + XN.
// SCTLR_EL1.WXN is set from the start: no writable page is ever executable.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace mmu {

constexpr uint64_t kVaSpan = 1ull << 39; // T0SZ = 25

// RamPages: RAM mapped with 4 KiB pages only, so single pages (stack guards) can later be
// unmapped without breaking a live block mapping. Guard: left unmapped (a later region that
// would map the range anyway, such as the RAM around it, is refined to invalid pages).
enum class Kind : uint8_t { KernelText, KernelRodata, KernelData, Ram, RamPages, Device, Guard };

struct Region {
    uint64_t base;
    uint64_t size;
    Kind kind;
};

// Called with the MMU off: maps the regions (later entries refine earlier ones) in the early
// table and turns the MMU on. Only boot_main calls it, with the image's sections.
void enable_early(const Region* regions, size_t count);

// Builds the final table from the regions (later entries refine earlier ones: map RAM first,
// then the kernel sections) and switches to it.
ktl::Result<void> install(const Region* regions, size_t count);

bool is_mapped_ram(uint64_t addr);
// Removes the 4 KiB page at addr (inside a RamPages region) from the map; later accesses fault.
ktl::Result<void> unmap_page(uint64_t addr);
// True when addr has a valid translation (walks the live table).
bool is_mapped(uint64_t addr);
// True when addr is mapped as normal, writable memory (task buffers passed to system calls).
bool is_writable_ram(uint64_t addr);
size_t table_pages_used();
uint64_t early_normal_bytes(); // how much the early table mapped as normal memory
bool wxn_enabled();

} // namespace mmu

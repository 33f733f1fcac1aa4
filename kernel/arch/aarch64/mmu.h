#pragma once
// Stage-1 EL1 translation, identity mapped (VA == PA), 4 KiB granule, 39-bit VA (T0SZ = 25).
// Boot enables the MMU twice: first with a coarse table (1 GiB blocks: the kernel's gigabyte
// normal memory, everything else device) so C++ and the DTB parser run with caches and
// unaligned accesses allowed; then with the final table built from the device tree: RAM normal
// write-back, kernel text RX, rodata R, data/bss/stack/heap RW+XN (W^X), devices nGnRE + XN.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace mmu {

// RamPages: RAM mapped with 4 KiB pages only, so single pages (stack guards) can later be
// unmapped without breaking a live block mapping.
enum class Kind : uint8_t { KernelText, KernelRodata, KernelData, Ram, RamPages, Device };

struct Region {
    uint64_t base;
    uint64_t size;
    Kind kind;
};

// Called with the MMU off; identity maps the 1 GiB blocks holding `kernel` and `dtb` as
// normal memory and every other block below 512 GiB as device memory.
void enable_early(uintptr_t kernel, uintptr_t dtb);

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

} // namespace mmu

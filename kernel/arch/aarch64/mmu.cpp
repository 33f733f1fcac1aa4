// Compiled with -mstrict-align -fno-tree-loop-distribute-patterns: enable_early() runs with
// the MMU off, where every access is Device memory and must be aligned, and must not call
// out to library memset/memcpy.
#include "mmu.h"

#include "cpu.h"

namespace mmu {
namespace {

constexpr uint64_t kPageSize = 4096;
constexpr uint64_t kL2Block = 2ull << 20;
constexpr uint64_t kL1Block = 1ull << 30;
constexpr uint64_t kVaLimit = kVaSpan;
constexpr size_t kEntries = 512;
constexpr size_t kPoolPages = 64;
constexpr size_t kMaxRamRegions = 16;

// Descriptor fields (ARM DDI 0487 D8.3).
constexpr uint64_t kDescBlock = 0b01;
constexpr uint64_t kDescTable = 0b11; // also "page" at level 3
constexpr uint64_t kDescTypeMask = 0b11;
constexpr uint64_t kAddrMask = 0x0000fffffffff000ull;
constexpr uint64_t kAttrDevice = 0ull << 2; // MAIR index 0: Device-nGnRE
constexpr uint64_t kAttrNormal = 1ull << 2; // MAIR index 1: Normal write-back RW-allocate
constexpr uint64_t kApReadOnly = 1ull << 7;
constexpr uint64_t kShInner = 3ull << 8;
constexpr uint64_t kAccessFlag = 1ull << 10;
constexpr uint64_t kPxn = 1ull << 53;
constexpr uint64_t kUxn = 1ull << 54;

constexpr uint64_t kMair = 0x04 | (0xffull << 8) | (0x44ull << 16);

constexpr uint64_t kSctlrM = 1ull << 0;
constexpr uint64_t kSctlrA = 1ull << 1;
constexpr uint64_t kSctlrC = 1ull << 2;
constexpr uint64_t kSctlrI = 1ull << 12;
constexpr uint64_t kSctlrWxn = 1ull << 19;

// Page-table pages come from fixed pools: the early table's (live only until install()) and the
// final table's, so building the final table never writes a page the walker is still using.
struct Pool {
    uint64_t (*pages)[kEntries];
    size_t capacity;
    size_t used;
};

constexpr size_t kEarlyPoolPages = 16;
alignas(4096) uint64_t g_early_pages[kEarlyPoolPages][kEntries];
alignas(4096) uint64_t g_final_pages[kPoolPages][kEntries];
Pool g_early { g_early_pages, kEarlyPoolPages, 0 };
Pool g_pool { g_final_pages, kPoolPages, 0 };
uint64_t g_early_normal_bytes = 0;
Region g_ram[kMaxRamRegions];
size_t g_ram_count = 0;
uint64_t* g_live_l1 = nullptr;

uint64_t attributes(Kind kind) {
    switch (kind) {
    case Kind::KernelText: return kAttrNormal | kShInner | kAccessFlag | kApReadOnly | kUxn;
    case Kind::KernelRodata: return kAttrNormal | kShInner | kAccessFlag | kApReadOnly | kUxn | kPxn;
    case Kind::KernelData:
    case Kind::Ram:
    case Kind::RamPages: return kAttrNormal | kShInner | kAccessFlag | kUxn | kPxn;
    case Kind::Device: return kAttrDevice | kAccessFlag | kUxn | kPxn;
    case Kind::Guard: return 0;
    }
    return kAttrDevice | kAccessFlag | kUxn | kPxn;
}

uint64_t* new_table(Pool& pool) {
    if (pool.used == pool.capacity)
        return nullptr;
    uint64_t* t = pool.pages[pool.used++];
    for (size_t i = 0; i < kEntries; ++i)
        t[i] = 0;
    return t;
}

// Returns the next-level table behind *entry, creating it, or splitting a block into
// kEntries smaller blocks/pages with the same attributes.
uint64_t* descend(Pool& pool, uint64_t* entry, uint64_t child_size, bool child_is_page) {
    uint64_t desc = *entry;
    if ((desc & kDescTypeMask) == kDescTable)
        return reinterpret_cast<uint64_t*>(desc & kAddrMask);
    uint64_t* table = new_table(pool);
    if (!table)
        return nullptr;
    if ((desc & kDescTypeMask) == kDescBlock) {
        uint64_t base = desc & kAddrMask & ~(child_size * kEntries - 1);
        uint64_t attrs = desc & ~kAddrMask & ~kDescTypeMask;
        for (size_t i = 0; i < kEntries; ++i)
            table[i] = (base + i * child_size) | attrs | (child_is_page ? kDescTable : kDescBlock);
    }
    *entry = reinterpret_cast<uint64_t>(table) | kDescTable;
    return table;
}

// Maps [base, base + size) in a table that is not live (no break-before-make needed: the walker
// does not see it until switch_table). attrs == 0 (Kind::Guard) leaves the pages invalid.
ktl::Result<void> map(Pool& pool, uint64_t* l1, uint64_t base, uint64_t size, uint64_t attrs, bool pages_only) {
    uint64_t addr = base & ~(kPageSize - 1);
    uint64_t end = (base + size + kPageSize - 1) & ~(kPageSize - 1);
    if (end > kVaLimit || end < addr)
        return ktl::Error::OutOfRange;
    while (addr < end) {
        uint64_t* e1 = &l1[(addr >> 30) & 511];
        if (!pages_only && (addr & (kL1Block - 1)) == 0 && end - addr >= kL1Block &&
            (*e1 & kDescTypeMask) != kDescTable) {
            *e1 = addr | attrs | kDescBlock;
            addr += kL1Block;
            continue;
        }
        uint64_t* l2 = descend(pool, e1, kL2Block, false);
        if (!l2)
            return ktl::Error::NoMemory;
        uint64_t* e2 = &l2[(addr >> 21) & 511];
        if (!pages_only && (addr & (kL2Block - 1)) == 0 && end - addr >= kL2Block &&
            (*e2 & kDescTypeMask) != kDescTable) {
            *e2 = addr | attrs | kDescBlock;
            addr += kL2Block;
            continue;
        }
        uint64_t* l3 = descend(pool, e2, kPageSize, true);
        if (!l3)
            return ktl::Error::NoMemory;
        l3[(addr >> 12) & 511] = attrs == 0 ? 0 : addr | attrs | kDescTable;
        addr += kPageSize;
    }
    return {};
}

uint64_t tcr_value() {
    uint64_t pa_range = READ_SYSREG(id_aa64mmfr0_el1) & 0xf;
    if (pa_range > 5)
        pa_range = 5;          // 48-bit: 52-bit output needs FEAT_LPA descriptors we don't use
    return 25                  // T0SZ: 39-bit VA
           | (1ull << 8)       // IRGN0: write-back read/write-allocate walks
           | (1ull << 10)      // ORGN0
           | (3ull << 12)      // SH0: inner shareable
           | (1ull << 23)      // EPD1: no TTBR1 walks
           | (pa_range << 32); // IPS
}

// Replaces the live table. The old and the new table map the same addresses with blocks of
// other sizes (1 GiB or 2 MiB there, 4 KiB pages here), and a core holding TLB entries of both
// for one address may take a TLB conflict abort (ARM DDI 0487 D8.16, break-before-make): the
// Cortex-A72/A76 of the Pi do, QEMU does not. So the MMU is off while the base changes and the
// TLB is emptied. Identity mapping keeps the next instruction where it was; nothing in between
// touches memory (with the MMU off every data access is Device, uncached), so no stale line can
// be read.
void switch_table(uint64_t* l1) {
    arch::dsb_ish();
    uint64_t on = READ_SYSREG(sctlr_el1);
    uint64_t off = on & ~kSctlrM;
    asm volatile("msr sctlr_el1, %[off]\n isb\n"
                 "msr ttbr0_el1, %[table]\n isb\n"
                 "tlbi vmalle1\n dsb ish\n isb\n"
                 "msr sctlr_el1, %[on]\n isb\n" ::[off] "r"(off),
                 [on] "r"(on), [table] "r"(reinterpret_cast<uint64_t>(l1))
                 : "memory");
}

} // namespace

void enable_early(const Region* regions, size_t count) {
    g_early.used = 0;
    uint64_t* l1 = new_table(g_early);
    bool built = l1 != nullptr;
    for (size_t i = 0; built && i < count; ++i) {
        built = map(g_early, l1, regions[i].base, regions[i].size, attributes(regions[i].kind), false).ok();
        if (regions[i].kind != Kind::Device && regions[i].kind != Kind::Guard)
            g_early_normal_bytes += regions[i].size;
    }
    if (!built) // the regions are the image's own sections: only a broken build gets here
        for (;;)
            asm volatile("wfe");

    // The tables were written with the MMU off (non-cacheable); drop any stale cached copy
    // before walks start reading them through the cache.
    for (size_t page = 0; page < g_early.used; ++page)
        for (size_t off = 0; off < sizeof(g_early_pages[0]); off += 64)
            asm volatile("dc ivac, %0" ::"r"(reinterpret_cast<uintptr_t>(g_early_pages[page]) + off) : "memory");
    arch::dsb_sy();

    WRITE_SYSREG(mair_el1, kMair);
    WRITE_SYSREG(tcr_el1, tcr_value());
    WRITE_SYSREG(ttbr0_el1, reinterpret_cast<uint64_t>(l1));
    arch::isb();
    asm volatile("tlbi vmalle1\n dsb ish\n isb" ::: "memory");
    uint64_t sctlr = READ_SYSREG(sctlr_el1);
    // WXN: whatever is writable is never executable, whatever a descriptor says.
    sctlr |= kSctlrM | kSctlrC | kSctlrI | kSctlrWxn;
    sctlr &= ~kSctlrA; // unaligned normal accesses allowed
    WRITE_SYSREG(sctlr_el1, sctlr);
    arch::isb();
}

ktl::Result<void> install(const Region* regions, size_t count) {
    g_pool.used = 0;
    g_ram_count = 0;
    uint64_t* l1 = new_table(g_pool);
    if (!l1)
        return ktl::Error::NoMemory;
    for (size_t i = 0; i < count; ++i) {
        bool pages_only = regions[i].kind == Kind::RamPages || regions[i].kind == Kind::Guard;
        TRY_VOID(map(g_pool, l1, regions[i].base, regions[i].size, attributes(regions[i].kind), pages_only));
        if ((regions[i].kind == Kind::Ram || regions[i].kind == Kind::RamPages) && g_ram_count < kMaxRamRegions)
            g_ram[g_ram_count++] = regions[i];
    }
    switch_table(l1);
    g_live_l1 = l1;
    return {};
}

// Finds the level-3 entry for addr, or null when addr is unmapped or block-mapped.
static uint64_t* l3_entry(uint64_t addr) {
    if (!g_live_l1 || addr >= kVaLimit)
        return nullptr;
    uint64_t e1 = g_live_l1[(addr >> 30) & 511];
    if ((e1 & kDescTypeMask) != kDescTable)
        return nullptr;
    uint64_t e2 = reinterpret_cast<uint64_t*>(e1 & kAddrMask)[(addr >> 21) & 511];
    if ((e2 & kDescTypeMask) != kDescTable)
        return nullptr;
    return &reinterpret_cast<uint64_t*>(e2 & kAddrMask)[(addr >> 12) & 511];
}

ktl::Result<void> unmap_page(uint64_t addr) {
    uint64_t* e = l3_entry(addr & ~(kPageSize - 1));
    if (!e || (*e & kDescTypeMask) != kDescTable)
        return ktl::Error::InvalidArgs;
    // Valid -> invalid needs no break-before-make; invalidate the stale TLB entry.
    *e = 0;
    arch::dsb_ish();
    asm volatile("tlbi vaae1is, %0\n dsb ish\n isb" ::"r"(addr >> 12) : "memory");
    return {};
}

// The leaf descriptor that translates addr in the live table, or 0 when unmapped.
static uint64_t leaf_descriptor(uint64_t addr) {
    if (!g_live_l1 || addr >= kVaLimit)
        return 0;
    uint64_t e1 = g_live_l1[(addr >> 30) & 511];
    if ((e1 & kDescTypeMask) != kDescTable)
        return (e1 & kDescTypeMask) == kDescBlock ? e1 : 0;
    uint64_t e2 = reinterpret_cast<uint64_t*>(e1 & kAddrMask)[(addr >> 21) & 511];
    if ((e2 & kDescTypeMask) != kDescTable)
        return (e2 & kDescTypeMask) == kDescBlock ? e2 : 0;
    uint64_t e3 = reinterpret_cast<uint64_t*>(e2 & kAddrMask)[(addr >> 12) & 511];
    return (e3 & kDescTypeMask) == kDescTable ? e3 : 0;
}

bool is_mapped(uint64_t addr) { return leaf_descriptor(addr) != 0; }

bool is_mapped_ram(uint64_t addr) {
    for (size_t i = 0; i < g_ram_count; ++i) {
        if (addr >= g_ram[i].base && addr - g_ram[i].base < g_ram[i].size)
            return true;
    }
    return false;
}

bool is_writable_ram(uint64_t addr) {
    uint64_t d = leaf_descriptor(addr);
    return d != 0 && (d & kApReadOnly) == 0 && (d & (7ull << 2)) == kAttrNormal;
}

size_t table_pages_used() { return g_pool.used; }
uint64_t early_normal_bytes() { return g_early_normal_bytes; }
bool wxn_enabled() { return (READ_SYSREG(sctlr_el1) & kSctlrWxn) != 0; }

} // namespace mmu

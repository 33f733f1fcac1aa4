#include "smp.h"

#include "arch/aarch64/cpu.h"
#include "clock.h"
#include "log.h"
#include "mm/kheap.h"
#include "mm/pmm.h"

#include <drivers/psci.h>
#include <dtb/dtb.h>

extern "C" char secondary_entry[];

namespace smp {
namespace {

// What a starting core reads before its MMU is on (boot/start.S): its layout is the assembly's.
struct alignas(64) BootBlock {
    uint64_t stack_top, mair, tcr, ttbr0, sctlr, tpidr;
    uint64_t mpidr;
    uint64_t online; // set by the core once it runs with the MMU on (release), read by the boot core
};
static_assert(sizeof(BootBlock) == 64);

BootBlock g_blocks[kMaxCores];
uint32_t g_online = 1, g_listed = 1;
constexpr unsigned kStackOrder = 2;                 // 16 KiB a core: secondary_main only waits
constexpr uint64_t kWaitNs = 200'000'000;           // for a started core to say it runs
constexpr uint64_t kAffinityMask = 0xff00ffffffull; // Aff3..Aff0 (MPIDR_EL1 has RES1 and MT bits besides)

// The block as a core with its MMU (and caches) off reads it: written back to the point of coherency.
void clean(const void* p, size_t bytes) {
    for (uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63); a < reinterpret_cast<uintptr_t>(p) + bytes;
         a += 64)
        asm volatile("dc cvac, %0" ::"r"(a) : "memory");
    asm volatile("dsb sy" ::: "memory");
}

uint64_t cpu_reg(const dtb::Blob& blob, dtb::Node cpu, uint32_t address_cells) {
    auto p = blob.property(cpu, "reg");
    uint64_t v = 0;
    if (!p || p->value.size() != 4 * address_cells || !dtb::read_cells(p->value, 0, address_cells, v))
        return ~0ull;
    return v;
}

} // namespace

uint32_t online() { return __atomic_load_n(&g_online, __ATOMIC_ACQUIRE); }
uint32_t listed() { return g_listed; }

void start_secondaries(const dtb::Blob& blob) {
    auto cpus = blob.find("/cpus");
    if (!cpus)
        return;
    const uint32_t address_cells = blob.u32(*cpus, "#address-cells").value_or(1);
    const uint64_t self = arch::mpidr() & kAffinityMask;
    uint32_t listed = 0, skipped_spin = 0, failed = 0;
    uint64_t mair, tcr, ttbr0, sctlr, tpidr;
    asm volatile("mrs %0, mair_el1\n mrs %1, tcr_el1\n mrs %2, ttbr0_el1\n mrs %3, sctlr_el1\n mrs %4, tpidr_el0"
                 : "=r"(mair), "=r"(tcr), "=r"(ttbr0), "=r"(sctlr), "=r"(tpidr));
    for (auto n = blob.first_child(*cpus); n; n = blob.next_sibling(*n)) {
        if (blob.string(*n, "device_type").value_or("") != "cpu")
            continue;
        ++listed;
        const uint64_t mpidr = cpu_reg(blob, *n, address_cells);
        if (mpidr == ~0ull || (mpidr & kAffinityMask) == self)
            continue;
        if (blob.string(*n, "enable-method").value_or("") != "psci" || !Psci::available()) {
            ++skipped_spin;
            continue;
        }
        const uint32_t slot = g_online;
        if (slot >= kMaxCores)
            break;
        auto stack = pmm::alloc_pages(kStackOrder, static_cast<uint16_t>(kheap::Owner::Kernel));
        if (!stack) {
            ++failed;
            continue;
        }
        BootBlock& b = g_blocks[slot];
        b = BootBlock { *stack + (4096ull << kStackOrder), mair, tcr, ttbr0, sctlr, tpidr, mpidr, 0 };
        clean(&b, sizeof b);
        const int64_t r = Psci::cpu_on(mpidr, reinterpret_cast<uint64_t>(secondary_entry),
                                       reinterpret_cast<uint64_t>(&b));
        const uint64_t until = clock::monotonic_ns() + kWaitNs;
        while (r == 0 && __atomic_load_n(&b.online, __ATOMIC_ACQUIRE) == 0 && clock::monotonic_ns() < until)
            asm volatile("yield" ::: "memory");
        if (r != 0 || __atomic_load_n(&b.online, __ATOMIC_ACQUIRE) == 0) {
            ++failed; // (its stack stays: a core that starts late must not run on freed memory)
            KLOG_WARN("smp: core %#llx did not start (PSCI CPU_ON: %lld)", static_cast<unsigned long long>(mpidr),
                      static_cast<long long>(r));
            continue;
        }
        __atomic_store_n(&g_online, slot + 1, __ATOMIC_RELEASE);
    }
    g_listed = listed ? listed : 1;
    if (g_listed > 1 && g_online == g_listed)
        KLOG_INFO("smp: %u of %u cores online, each but the boot core waiting in WFI", g_online, g_listed);
    else if (g_listed > 1)
        KLOG_INFO("smp: %u of %u cores online (%u started by a spin table: not yet; %u did not start)", g_online,
                  g_listed, skipped_spin, failed);
}

} // namespace smp

// A started core, its MMU on (boot/start.S): says so, then waits with interrupts masked. Nothing
// is routed to it yet: it sleeps until the machine stops.
extern "C" [[noreturn]] void secondary_main(smp::BootBlock* block) {
    __atomic_store_n(&block->online, 1, __ATOMIC_RELEASE);
    asm volatile("sev" ::: "memory");
    for (;;)
        asm volatile("msr daifset, #0xf\n wfi" ::: "memory");
}

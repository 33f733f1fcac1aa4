#include "stack_arena.h"

#include "../arch/aarch64/cpu.h"
#include "../arch/aarch64/mmu.h"

namespace stack_arena {
namespace {
constexpr size_t kMaxSlots = 256;
uint64_t g_base = 0;
size_t g_slots = 0;
bool g_used[kMaxSlots] = {};
size_t g_used_count = 0;
} // namespace

ktl::Result<void> init(uint64_t base, uint64_t size) {
    if (base % kSlotSize != 0 && base % 4096 != 0)
        return ktl::Error::InvalidArgs;
    g_base = base;
    g_slots = size / kSlotSize;
    if (g_slots > kMaxSlots)
        g_slots = kMaxSlots;
    for (size_t i = 0; i < g_slots; ++i)
        TRY_VOID(mmu::unmap_page(g_base + i * kSlotSize));
    return {};
}

ktl::Result<Stack> alloc() {
    arch::IrqGuard guard;
    for (size_t i = 0; i < g_slots; ++i) {
        if (!g_used[i]) {
            g_used[i] = true;
            ++g_used_count;
            uint64_t slot = g_base + i * kSlotSize;
            return Stack { slot, slot + kGuardSize, slot + kSlotSize };
        }
    }
    return ktl::Error::NoMemory;
}

void free(uint64_t top) {
    arch::IrqGuard guard;
    if (top <= g_base)
        return;
    size_t i = (top - g_base) / kSlotSize - 1;
    if (i < g_slots && g_used[i]) {
        g_used[i] = false;
        --g_used_count;
    }
}

bool is_guard(uint64_t addr) {
    if (addr < g_base || addr >= g_base + g_slots * kSlotSize)
        return false;
    return (addr - g_base) % kSlotSize < kGuardSize;
}

size_t slots_total() { return g_slots; }
size_t slots_used() { return g_used_count; }

} // namespace stack_arena

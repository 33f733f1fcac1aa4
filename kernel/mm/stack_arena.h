#pragma once
// Task stacks: fixed slots in a region mapped with 4 KiB pages, each slot's lowest page left
// unmapped as a guard, so a stack overflow faults instead of corrupting its neighbour.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace stack_arena {

constexpr uint64_t kSlotSize = 32 * 1024; // guard page + 28 KiB of stack
constexpr uint64_t kGuardSize = 4096;

// [base, base + size) must be mapped as mmu::Kind::RamPages.
ktl::Result<void> init(uint64_t base, uint64_t size);
struct Stack {
    uint64_t guard;  // lowest address (unmapped page)
    uint64_t bottom; // lowest usable address
    uint64_t top;    // initial stack pointer (16-byte aligned)
};
ktl::Result<Stack> alloc();
void free(uint64_t top);
bool is_guard(uint64_t addr); // addr lies in some slot's guard page
size_t slots_total();
size_t slots_used();

} // namespace stack_arena

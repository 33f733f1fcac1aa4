#include "semihosting.h"

#include "cpu.h"

namespace semihosting {
namespace {
bool g_enabled = false;
constexpr uint64_t SYS_EXIT = 0x18;
constexpr uint64_t ADP_Stopped_ApplicationExit = 0x20026;
} // namespace

void set_enabled(bool enabled) { g_enabled = enabled; }
bool enabled() { return g_enabled; }

void exit(uint32_t code) {
    if (g_enabled) {
        // AArch64 SYS_EXIT takes a two-word block: reason, exit status.
        volatile uint64_t block[2] = { ADP_Stopped_ApplicationExit, code };
        register uint64_t x0 asm("x0") = SYS_EXIT;
        register uint64_t x1 asm("x1") = reinterpret_cast<uint64_t>(block);
        asm volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
    }
    arch::irq_disable();
    for (;;)
        arch::wfi();
}

} // namespace semihosting

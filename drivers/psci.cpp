#include "psci.h"

#include <kernel/arch/aarch64/cpu.h>

Psci::Conduit Psci::s_conduit = Psci::Conduit::None;

namespace {
// Function IDs (ARM DEN 0022D 5.1).
constexpr uint64_t PSCI_VERSION = 0x84000000;
constexpr uint64_t PSCI_SYSTEM_OFF = 0x84000008;
constexpr uint64_t PSCI_SYSTEM_RESET = 0x84000009;
constexpr uint64_t PSCI_CPU_ON_64 = 0xc4000003;

[[noreturn]] void halt() {
    arch::irq_disable();
    for (;;)
        arch::wfi();
}
} // namespace

uint64_t Psci::call(uint64_t function, uint64_t a1, uint64_t a2, uint64_t a3) {
    register uint64_t x0 asm("x0") = function;
    register uint64_t x1 asm("x1") = a1;
    register uint64_t x2 asm("x2") = a2;
    register uint64_t x3 asm("x3") = a3;
    if (s_conduit == Conduit::Hvc)
        asm volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)::"memory");
    else if (s_conduit == Conduit::Smc)
        asm volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)::"memory");
    else
        return ~0ull;
    return x0;
}

uint32_t Psci::version() {
    if (!available())
        return 0;
    return static_cast<uint32_t>(call(PSCI_VERSION));
}

int64_t Psci::cpu_on(uint64_t target, uint64_t entry, uint64_t context) {
    if (!available())
        return -1; // NOT_SUPPORTED
    return static_cast<int64_t>(call(PSCI_CPU_ON_64, target, entry, context));
}

void Psci::system_off() {
    if (available())
        call(PSCI_SYSTEM_OFF);
    halt();
}

void Psci::system_reset() {
    if (available())
        call(PSCI_SYSTEM_RESET);
    halt();
}

#include "bcm2835_pm.h"

#include "mmio.h"

#include <kernel/arch/aarch64/cpu.h>

uintptr_t Bcm2835Pm::s_base = 0;

namespace {
// Register offsets and fields (the BCM2835 peripherals' PM block; Linux's bcm2835_wdt.c uses the
// same): every write carries the password in its top byte or is ignored.
constexpr uintptr_t PM_RSTC = 0x1c;
constexpr uintptr_t PM_RSTS = 0x20;
constexpr uintptr_t PM_WDOG = 0x24;
constexpr uint32_t kPassword = 0x5a000000;
constexpr uint32_t kRstcWrcfgClr = 0xffffffcf;
constexpr uint32_t kRstcWrcfgFullReset = 0x00000020;
constexpr uint32_t kRstsPartitionClr = 0xfffffaaa;
// The partition number is spread over the even bits of PM_RSTS; 63 means "halt".
constexpr uint32_t kHaltPartition = 63;

uint32_t partition_bits(uint32_t p) {
    uint32_t bits = 0;
    for (uint32_t i = 0; i < 6; ++i)
        bits |= ((p >> i) & 1u) << (2 * i);
    return bits;
}
} // namespace

void Bcm2835Pm::reset(uint32_t partition) {
    arch::irq_disable();
    uint32_t rsts = mmio::read32(s_base + PM_RSTS) & kRstsPartitionClr;
    mmio::write32(s_base + PM_RSTS, kPassword | rsts | partition_bits(partition));
    mmio::write32(s_base + PM_WDOG, kPassword | 10); // ticks of ~16 us: at once
    uint32_t rstc = mmio::read32(s_base + PM_RSTC) & kRstcWrcfgClr;
    mmio::write32(s_base + PM_RSTC, kPassword | rstc | kRstcWrcfgFullReset);
    for (;;)
        arch::wfi();
}

void Bcm2835Pm::power_off() { reset(kHaltPartition); }
void Bcm2835Pm::reboot() { reset(0); }

// Board file: QEMU `virt` (hw/arm/virt.c). Physical memory map (QEMU 10, gic-version=2|3):
//   0x0000_0000  flash (2 x 64 MiB)            -- left unmapped below 2 MiB: null guard
//   0x0800_0000  GIC distributor
//   0x0801_0000  GICv2 CPU interface / 0x080A_0000 GICv3 redistributors
//   0x0900_0000  PL011 UART0 (INTID 33)
//   0x0901_0000  PL031 RTC
//   0x0A00_0000  32 virtio-mmio slots (0x200 apart, INTIDs 48..79)
//   0x4000_0000  RAM; QEMU puts the DTB at its base for ELF kernels (x0 = 0)
//   0x4020_0000  Basalt kernel image (linked here, leaving >= 1 MiB for the DTB)
#include "board.h"

namespace board {

const char* const kName = "qemu-virt";
const char* const kRootCompatible = "linux,dummy-virt";
const uint64_t kMaxDtbSize = 2u << 20;

uintptr_t fallback_dtb() { return 0x40000000; }
uintptr_t emergency_pl011() { return 0x09000000; }

} // namespace board

// Board file: Raspberry Pi 4 Model B, Pi 400 and CM4 (BCM2711). The firmware (start4.elf) loads
// kernel8.img at 0x80000 (config.txt: kernel_address=0x80000) and enters it at EL2 on core 0
// with x0 = the device tree it prepared; the other cores wait in its spin table (0xd8 + 8 n).
// QEMU's raspi4b does the same, except that without -dtb x0 points at an ATAG list: then the
// device tree built into the image (kernel/board/rpi4.dts) describes the board.
#include "board.h"

extern "C" const char basalt_builtin_dtb[];

namespace board {

const char* const kName = "rpi4";
const char* const kRootCompatible = "brcm,bcm2711";
const uint64_t kMaxDtbSize = 2u << 20;

uintptr_t fallback_dtb() { return reinterpret_cast<uintptr_t>(basalt_builtin_dtb); }
uintptr_t emergency_pl011() { return 0xfe201000; } // UART0 on GPIO 14/15

} // namespace board

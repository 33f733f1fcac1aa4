// Board file: Raspberry Pi 5 (BCM2712). Its EEPROM bootloader loads kernel_2712.img at 0x80000
// (config.txt: kernel_address=0x80000) and enters it at EL2 with x0 = the device tree, the other
// cores held by PSCI in the trusted firmware. Everything else comes from that device tree (the
// SoC's peripherals sit above 0x10_0000_0000). Not yet run on hardware here.
#include "board.h"

namespace board {

const char* const kName = "rpi5";
const char* const kRootCompatible = "brcm,bcm2712";
const uint64_t kMaxDtbSize = 2u << 20;

uintptr_t fallback_dtb() { return 0; }               // the firmware always passes one
uintptr_t emergency_pl011() { return 0x107d001000; } // UART10, the debug connector

} // namespace board

#pragma once
// The board an image is built for: only what must be known before the device tree is read.
// Everything else (memory, UART, interrupt controller, timer, power, mailbox) comes from the DTB.
// One object library serves every board; each image links one board file (kernel/board/*.cpp)
// at the board's load address (kernel/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

namespace board {

extern const char* const kName; // "qemu-virt", "rpi4", "rpi5"
// The root `compatible` this image is for ("linux,dummy-virt", "brcm,bcm2711", "brcm,bcm2712"):
// a Pi 5 image started on a Pi 4 (or the reverse) says so instead of misbehaving.
extern const char* const kRootCompatible;
extern const uint64_t kMaxDtbSize;

// Where to look for a device tree when x0 holds none (called with the MMU off): QEMU virt puts it
// at the base of RAM for an ELF kernel; the Pi images carry one of their own for QEMU's raspi4b
// run without -dtb (x0 then points at an ATAG list).
uintptr_t fallback_dtb();
// Only for reporting that the device tree itself is unusable (no other way to find a UART).
uintptr_t emergency_pl011();

} // namespace board

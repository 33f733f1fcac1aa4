#pragma once
// ATAG lists: the boot description older ARM firmware passes instead of a device tree. QEMU's
// raspi4b does so when started without -dtb (x0 = 0x100), and carries `-append` in an
// ATAG_CMDLINE, which is all Basalt takes from it (the board's built-in device tree describes
// the rest). Every field is distrusted: sizes are checked against the window given.
#include <cstddef>
#include <cstdint>

namespace atags {

constexpr uint32_t kCore = 0x54410001;
constexpr uint32_t kCmdline = 0x54410009;

// True when the window starts with an ATAG_CORE header. `window` must be 4-byte aligned.
bool is_atag_list(const volatile uint32_t* window, size_t bytes);
// Copies the ATAG_CMDLINE string into out (NUL-terminated, truncated to cap - 1) and returns its
// length, or -1 when the list has none or is malformed. Reads words through the volatile pointer
// (the list may sit in memory mapped as device memory).
long cmdline(const volatile uint32_t* window, size_t bytes, char* out, size_t cap);

} // namespace atags

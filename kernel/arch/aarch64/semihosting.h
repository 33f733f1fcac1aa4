#pragma once
// ARM semihosting (ARM DUI 0471/IHI 0080): used only to hand an exit status to QEMU when it
// runs with -semihosting-config enable=on. Without that option HLT #0xF000 is undefined, so
// the kernel uses it only when the `semihosting` boot argument says the host enabled it.
#include <cstdint>

namespace semihosting {

void set_enabled(bool enabled);
bool enabled();
[[noreturn]] void exit(uint32_t code);

} // namespace semihosting

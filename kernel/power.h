#pragma once
// Ending the machine: a semihosting exit status when the host enabled semihosting (tests),
// otherwise PSCI SYSTEM_OFF / SYSTEM_RESET, otherwise the BCM2835 PM watchdog (Raspberry Pi 4),
// otherwise halt in WFI.
#include <cstdint>

namespace power {

// Exit statuses seen by the host through semihosting.
constexpr uint32_t kExitOk = 0;
constexpr uint32_t kExitPanic = 3;

[[noreturn]] void poweroff(uint32_t status);
[[noreturn]] void reboot();

} // namespace power

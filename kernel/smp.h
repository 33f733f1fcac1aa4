#pragma once
// The other cores (issue 36, first part; docs/kernel.md "Cores"): every core the device tree
// lists with enable-method "psci" is started through PSCI CPU_ON (QEMU virt, the Pi 5), turns its
// MMU on with the boot core's tables and then waits in WFI with interrupts masked: online, doing
// nothing yet (no scheduler runs there). Cores with a spin table (the Pi 4) are not started yet.
// The count is what the banner, kernel_info (`cpus`) and kernel://status report.
#include <cstdint>

namespace dtb {
class Blob;
}

namespace smp {

constexpr uint32_t kMaxCores = 8;

// Boot core, after the devices are probed (PSCI known) and with the final page tables installed.
void start_secondaries(const dtb::Blob& blob);
// Cores online, the boot core included; how many the device tree lists.
uint32_t online();
uint32_t listed();

} // namespace smp

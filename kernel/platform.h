#pragma once
// Device discovery: everything the kernel drives on a board is found in the device tree and
// bound to its driver class here. Board files only supply what is needed before the DTB.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace dtb {
class Blob;
}
class Pl011;
class SerialPort;
class Nic;

namespace genet {
class Genet;
}

namespace virtio {
class VirtioNet;
class VirtioRng;
} // namespace virtio

namespace rng200 {
class Rng200;
}

namespace platform {

struct Info {
    const char* model = "unknown";
    const char* irq_controller = "none";
    uint64_t ram_bytes = 0;
    size_t ram_ranges = 0;
    size_t reserved_ranges = 0;
    uint32_t timer_intid = 0;
    uint64_t timer_hz = 0;
    uint32_t uart_intid = 0;
    uintptr_t uart_base = 0;
    int uart_pins = -1; // the Pi 4: the function GPIO 14/15 read back after routing UART0 there (4 = ALT0)
    uintptr_t rtc_base = 0;
    const char* psci = "none";
    uint32_t psci_version = 0;
    uint64_t pm_watchdog = 0; // BCM2835 PM block (the Pi 4's power-off and reboot), 0 if none
    // What the VideoCore firmware reports through its mailbox (the Pi): zero where it has none.
    struct Firmware {
        bool present = false;
        uint32_t board_revision = 0;
        uint64_t serial = 0;
        uint32_t firmware_revision = 0;
        uint32_t arm_memory_base = 0, arm_memory_size = 0;
        uint8_t mac[6] = {};
        bool has_mac = false;
        uint32_t arm_hz = 0, core_hz = 0, uart_hz = 0, emmc_hz = 0;
        char board[64] = ""; // decoded revision, e.g. "Raspberry Pi 4 Model B rev 1.5, 2 GiB"
    } firmware;
    size_t devices = 0;
    size_t mapped_regions = 0;
    size_t virtio_devices = 0; // populated virtio-mmio slots
    uint32_t net_intid = 0;
    // The embedder's model as model= placed it (kernel/text/embedder.h reads it): mapped read-only,
    // out of the page allocator. 0: none; model_refused: given where it cannot be (not in RAM, or
    // over the kernel, the DTB or reserved memory).
    uint64_t model_base = 0, model_bytes = 0;
    bool model_refused = false;
};

const Info& info();
Pl011* console_uart();
// The virtio network devices in device-tree order (nullptr past the last one).
virtio::VirtioNet* net_device(size_t index = 0);
// The network interfaces the net task drives: vn0 is the first virtio-net device, else the Pi
// 4's GENET; vn1 a second virtio-net device (a swarm node's QEMU user network). nullptr if none.
constexpr size_t kMaxNics = 2;
Nic* nic(size_t index = 0);
// The Pi 4's Ethernet controller, when the device tree has one enabled (kernel/platform_genet.cpp).
ktl::Result<void> probe_genet(const dtb::Blob& blob);
genet::Genet* genet_device();
// The first virtio entropy device, or nullptr (kernel/rng.cpp reads it).
virtio::VirtioRng* entropy_device();
// The Pi 4's RNG200, when the device tree has it enabled and it warmed up (kernel/platform_rng200.cpp).
ktl::Result<void> probe_rng200(const dtb::Blob& blob);
rng200::Rng200* hardware_rng();
// The serial line (the Device object): with `mcp=serial`, the first virtio console when QEMU
// provides one, else the console UART. The shell and kernel console output stay on the UART.
SerialPort* line_port();

// Phase 1 (early MMU on): console UART from /chosen/stdout-path, polled.
ktl::Result<void> probe_console(const dtb::Blob& blob);
// Phase 2: final page tables from memory ranges, reserved memory and device registers.
ktl::Result<void> map_memory(const dtb::Blob& blob, uintptr_t dtb_addr);
// Phase 3: interrupt controller, timer, RTC, PSCI; console switched to interrupts.
ktl::Result<void> probe_devices(const dtb::Blob& blob);
// Part of phase 3: virtio-mmio slots (`virtio,mmio` nodes); binds the first two network devices
// and the first console.
struct VirtioSummary {
    size_t devices = 0;     // populated slots
    uint32_t net_intid = 0; // the first network device's; 0 when none was bound
};
VirtioSummary probe_virtio(const dtb::Blob& blob);
// The device list for the banner (grouped by compatible).
void print_devices(const dtb::Blob& blob);

} // namespace platform

// virtio-mmio discovery: QEMU virt lists 32 `virtio,mmio` slots in the device tree, most of
// them empty (device ID 0). Each populated slot is identified through its own registers; the
// first two network devices are bound to the virtio-net driver (vn0, vn1 in device-tree order:
// QEMU lists the last `-device` on its command line first), the first console to the virtio-console
// driver (it then carries the serial line), each with its interrupt routed from the slot's
// `interrupts` property; the first entropy device to the (polled) virtio-rng driver; the first
// block device to the virtio-blk driver (the disk the storage task keeps the store on).
#include "platform.h"

#include "bootargs.h"
#include "irq.h"
#include "log.h"
#include "dev/disk.h"
#include "mm/pmm.h"

#include <drivers/generic_timer.h>
#include <drivers/pl011.h>
#include <drivers/virtio/virtio_blk.h>
#include <drivers/virtio/virtio_console.h>
#include <drivers/virtio/virtio_mmio.h>
#include <drivers/virtio/virtio_net.h>
#include <drivers/virtio/virtio_rng.h>
#include <dtb/dtb.h>

#include <cstring>

namespace platform {
namespace {

constexpr size_t kMaxSlots = 64; // bound on the walk; QEMU virt has 32

virtio::VirtioNet* g_net[virtio::VirtioNet::kMaxDevices] = {};
size_t g_nets = 0;
virtio::VirtioConsole* g_console = nullptr;
virtio::VirtioRng* g_rng = nullptr;

// Device memory for rings and buffers: whole pages from the page allocator, owned by the kernel
// (owner 0) for the life of the system. The kernel maps RAM 1:1, so the address is physical.
ktl::Result<uintptr_t> dma_alloc(size_t bytes) {
    unsigned order = 0;
    while ((4096ull << order) < bytes && order < 10)
        ++order;
    if ((4096ull << order) < bytes)
        return ktl::Error::NoMemory;
    uint64_t addr = TRY(pmm::alloc_pages(order, 0));
    memset(reinterpret_cast<void*>(addr), 0, 4096ull << order);
    return static_cast<uintptr_t>(addr);
}

uint32_t bind_net(const dtb::Blob& blob, dtb::Node node, const virtio::VirtioMmio& dev) {
    auto irq_spec = blob.interrupt(node, 0);
    if (!irq_spec) {
        KLOG_WARN("virtio-net @ 0x%lx: no interrupt in the device tree; not used",
                  static_cast<unsigned long>(dev.base()));
        return 0;
    }
    auto net = virtio::VirtioNet::create(dev, dma_alloc);
    if (!net) {
        KLOG_WARN("virtio-net @ 0x%lx: %s", static_cast<unsigned long>(dev.base()), ktl::error_name(net.error()));
        return 0;
    }
    // QEMU drives the line as a level (high while InterruptStatus is non-zero); the handler
    // acknowledges before the end of interrupt, so level triggering never loses a wake-up.
    if (auto r = irq::attach(irq_spec->intid(), virtio::VirtioNet::irq_entry, *net, false); !r) {
        KLOG_WARN("virtio-net: intid %u: %s", irq_spec->intid(), ktl::error_name(r.error()));
        return 0;
    }
    virtio::VirtioNet* bound = g_net[g_nets++] = *net;
    const uint8_t* m = bound->mac();
    KLOG_INFO("virtio-net: vn%zu, %s transport @ 0x%lx intid %u, mac %02x:%02x:%02x:%02x:%02x:%02x, features 0x%llx",
              g_nets - 1, dev.legacy() ? "legacy" : "modern", static_cast<unsigned long>(dev.base()), irq_spec->intid(),
              m[0], m[1], m[2], m[3], m[4], m[5], static_cast<unsigned long long>(bound->features()));
    return irq_spec->intid();
}

void bind_console(const dtb::Blob& blob, dtb::Node node, const virtio::VirtioMmio& dev) {
    auto irq_spec = blob.interrupt(node, 0);
    if (!irq_spec) {
        KLOG_WARN("virtio-console @ 0x%lx: no interrupt in the device tree; not used",
                  static_cast<unsigned long>(dev.base()));
        return;
    }
    auto con = virtio::VirtioConsole::create(dev, dma_alloc, GenericTimer::now_ns);
    if (!con) {
        KLOG_WARN("virtio-console @ 0x%lx: %s", static_cast<unsigned long>(dev.base()), ktl::error_name(con.error()));
        return;
    }
    // The device answers the handshake inside create(): a port it has not announced by now is not
    // configured (e.g. only a `virtconsole` on port 0), and a dead line is worse than the UART.
    if (!(*con)->port_ready()) {
        KLOG_WARN(
            "virtio-console @ 0x%lx: no port %u (run.sh adds `virtserialport,nr=1`); the serial line stays on the UART",
            static_cast<unsigned long>(dev.base()), (*con)->port());
        return;
    }
    if (auto r = irq::attach(irq_spec->intid(), virtio::VirtioConsole::irq_entry, *con, false); !r) {
        KLOG_WARN("virtio-console: intid %u: %s", irq_spec->intid(), ktl::error_name(r.error()));
        return;
    }
    g_console = *con;
    KLOG_INFO("virtio-console: %s transport @ 0x%lx intid %u, %s port %u%s%s%s", dev.legacy() ? "legacy" : "modern",
              static_cast<unsigned long>(dev.base()), irq_spec->intid(),
              g_console->multiport() ? "multiport," : "single", g_console->port(),
              g_console->port_name()[0] ? " \"" : "", g_console->port_name(), g_console->port_name()[0] ? "\"" : "");
}

void bind_block(const dtb::Blob& blob, dtb::Node node, const virtio::VirtioMmio& dev) {
    if (bootargs::get().disk_off) {
        KLOG_INFO("virtio-blk @ 0x%lx: not used (disk=off)", static_cast<unsigned long>(dev.base()));
        return;
    }
    auto irq_spec = blob.interrupt(node, 0);
    if (!irq_spec) {
        KLOG_WARN("virtio-blk @ 0x%lx: no interrupt in the device tree; not used",
                  static_cast<unsigned long>(dev.base()));
        return;
    }
    auto blk = virtio::VirtioBlk::create(dev, dma_alloc);
    if (!blk) {
        KLOG_WARN("virtio-blk @ 0x%lx: %s", static_cast<unsigned long>(dev.base()), ktl::error_name(blk.error()));
        return;
    }
    static dev::Disk disk(*blk); // after create(): the completion callback needs the driver
    if (auto r = irq::attach(irq_spec->intid(), virtio::VirtioBlk::irq_entry, *blk, false); !r) {
        KLOG_WARN("virtio-blk: intid %u: %s", irq_spec->intid(), ktl::error_name(r.error()));
        return;
    }
    dev::set_disk(&disk);
    KLOG_INFO("virtio-blk: %s transport @ 0x%lx intid %u, %llu MiB, block %u, %s%s", dev.legacy() ? "legacy" : "modern",
              static_cast<unsigned long>(dev.base()), irq_spec->intid(),
              static_cast<unsigned long long>((*blk)->capacity_bytes() >> 20), (*blk)->block_size(),
              (*blk)->can_flush() ? "flush" : "NO FLUSH (writes may sit in a volatile cache)",
              (*blk)->read_only() ? ", read-only" : "");
}

void bind_entropy(const virtio::VirtioMmio& dev) {
    auto rng = virtio::VirtioRng::create(dev, dma_alloc);
    if (!rng) {
        KLOG_WARN("virtio-rng @ 0x%lx: %s", static_cast<unsigned long>(dev.base()), ktl::error_name(rng.error()));
        return;
    }
    g_rng = *rng;
    KLOG_INFO("virtio-rng: %s transport @ 0x%lx", dev.legacy() ? "legacy" : "modern",
              static_cast<unsigned long>(dev.base()));
}

} // namespace

virtio::VirtioNet* net_device(size_t index) { return index < g_nets ? g_net[index] : nullptr; }

virtio::VirtioRng* entropy_device() { return g_rng; }

SerialPort* line_port() {
    if (g_console && bootargs::get().mcp_serial)
        return g_console;
    return console_uart();
}

VirtioSummary probe_virtio(const dtb::Blob& blob) {
    VirtioSummary summary;
    std::optional<dtb::Node> node = blob.find_compatible("virtio,mmio");
    for (size_t i = 0; node && i < kMaxSlots; ++i, node = blob.find_compatible("virtio,mmio", node)) {
        if (auto status = blob.string(*node, "status"); status && *status != "okay" && *status != "ok")
            continue;
        auto reg = blob.reg(*node, 0);
        if (!reg)
            continue;
        auto dev = virtio::VirtioMmio::probe(reg->base, reg->size);
        if (!dev) {
            if (dev.error() != ktl::Error::NotFound)
                KLOG_WARN("virtio @ 0x%lx: %s", static_cast<unsigned long>(reg->base), ktl::error_name(dev.error()));
            continue;
        }
        ++summary.devices;
        if (dev->device_type() == virtio::DeviceType::Net && g_nets < virtio::VirtioNet::kMaxDevices) {
            uint32_t intid = bind_net(blob, *node, *dev);
            if (!summary.net_intid)
                summary.net_intid = intid;
        } else if (dev->device_type() == virtio::DeviceType::Console && !g_console)
            bind_console(blob, *node, *dev);
        else if (dev->device_type() == virtio::DeviceType::Entropy && !g_rng)
            bind_entropy(*dev);
        else if (dev->device_type() == virtio::DeviceType::Block && !dev::disk())
            bind_block(blob, *node, *dev);
    }
    return summary;
}

} // namespace platform

// The Raspberry Pi 4's random number generator (`brcm,bcm2711-rng200`): found in the device tree,
// started (its warm-up waited out) before the kernel's generator is seeded, and read by it
// (kernel/rng.cpp) beside any other source. QEMU's raspi4b models none (its tree has the node
// disabled): there the driver is proven against a model on the host (tests/host/rng200_test.cpp).
#include "log.h"
#include "platform.h"

#include <drivers/rng200/rng200.h>
#include <drivers/rng200/rng200_mmio.h>

#include <dtb/dtb.h>
#include <new>

namespace platform {
namespace {
rng200::Rng200* g_rng200 = nullptr;
}

ktl::Result<void> probe_rng200(const dtb::Blob& blob) {
    auto node = blob.find_compatible("brcm,bcm2711-rng200");
    if (!node || blob.string(*node, "status").value_or("okay") != "okay")
        return ktl::Error::NotFound;
    auto reg = TRY(blob.reg(*node, 0));
    if (reg.size < 0x28)
        return ktl::Error::Corrupt;
    alignas(rng200::MmioBus) static uint8_t bus_storage[sizeof(rng200::MmioBus)];
    alignas(rng200::Rng200) static uint8_t storage[sizeof(rng200::Rng200)];
    auto* bus = new (bus_storage) rng200::MmioBus(reg.base);
    auto* rng = new (storage) rng200::Rng200(*bus);
    if (!rng->start()) {
        KLOG_WARN("rng200 @ 0x%llx: no warm-up or no words: not used", static_cast<unsigned long long>(reg.base));
        return ktl::Error::TimedOut;
    }
    g_rng200 = rng;
    KLOG_INFO("rng200 @ 0x%llx: warmed up", static_cast<unsigned long long>(reg.base));
    return {};
}

rng200::Rng200* hardware_rng() { return g_rng200; }

} // namespace platform

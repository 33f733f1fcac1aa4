// The Raspberry Pi 4's Ethernet (GENET v5, `brcm,bcm2711-genet-v5`): found in the device tree,
// given its MAC address (the tree's local-mac-address, which the firmware fills in, else the
// firmware's mailbox answer), its PHY's MDIO address (phy-handle), 1 MiB of DMA buffers at the
// bus address the tree gives, and its interrupt. The net task then drives it like virtio-net.
#include "platform.h"

#include "irq.h"
#include "log.h"
#include "mm/pmm.h"

#include <drivers/genet/genet.h>
#include <drivers/genet/genet_mmio.h>
#include <drivers/virtio/virtio_net.h>
#include <dtb/dtb.h>

#include <cstring>
#include <new>

namespace platform {
namespace {

genet::Genet* g_genet = nullptr;

bool usable_mac(const uint8_t* m) {
    bool zero = true;
    for (int i = 0; i < 6; ++i)
        zero = zero && m[i] == 0;
    return !zero && !(m[0] & 1); // not all zero, not multicast
}

} // namespace

ktl::Result<void> probe_genet(const dtb::Blob& blob) {
    auto node = blob.find_compatible("brcm,bcm2711-genet-v5");
    if (!node || blob.string(*node, "status").value_or("okay") != "okay")
        return ktl::Error::NotFound;
    auto reg = TRY(blob.reg(*node, 0));
    if (reg.size < 0x10000)
        return ktl::Error::Corrupt;
    auto irq_spec = TRY(blob.interrupt(*node, 0));

    uint8_t mac[6] = {};
    if (auto p = blob.property(*node, "local-mac-address"); p && p->value.size() == 6)
        std::memcpy(mac, p->value.data(), 6);
    if (!usable_mac(mac) && info().firmware.has_mac)
        std::memcpy(mac, info().firmware.mac, 6);
    if (!usable_mac(mac)) {
        KLOG_WARN("genet: no MAC address (neither local-mac-address nor the firmware's): not used");
        return ktl::Error::NotFound;
    }
    uint32_t phy_address = 1;
    if (auto handle = blob.u32(*node, "phy-handle"))
        if (auto phy = blob.by_phandle(*handle))
            phy_address = blob.u32(*phy, "reg").value_or(1);

    constexpr unsigned kOrder = 8; // 1 MiB
    static_assert((4096ull << kOrder) >= genet::Genet::kMemoryBytes);
    const uint64_t memory = TRY(pmm::alloc_pages(kOrder, 0));
    std::memset(reinterpret_cast<void*>(memory), 0, genet::Genet::kMemoryBytes);
    auto bus_address = blob.dma_address(*node, memory, genet::Genet::kMemoryBytes);
    if (!bus_address) {
        pmm::free_pages(memory, kOrder);
        return bus_address.error();
    }
    alignas(genet::MmioBus) static uint8_t bus_storage[sizeof(genet::MmioBus)];
    alignas(genet::Genet) static uint8_t storage[sizeof(genet::Genet)];
    auto* bus = new (bus_storage) genet::MmioBus(reg.base);
    // Nothing the CPU wrote (the zeroing) may be written back over the device's data later.
    bus->dma_clean(reinterpret_cast<void*>(memory), genet::Genet::kMemoryBytes);
    auto nic = genet::Genet::create(storage, *bus, { reinterpret_cast<uint8_t*>(memory), *bus_address }, mac,
                                    phy_address);
    if (!nic) {
        KLOG_WARN("genet @ 0x%llx: %s", static_cast<unsigned long long>(reg.base), ktl::error_name(nic.error()));
        pmm::free_pages(memory, kOrder);
        return nic.error();
    }
    TRY_VOID(irq::attach(irq_spec.intid(), genet::Genet::irq_entry, *nic, false));
    g_genet = *nic;
    KLOG_INFO("genet: v5 @ 0x%llx intid %u, mac %02x:%02x:%02x:%02x:%02x:%02x, phy 0x%08x at mdio %u",
              static_cast<unsigned long long>(reg.base), irq_spec.intid(), mac[0], mac[1], mac[2], mac[3], mac[4],
              mac[5], g_genet->stats().phy_id, phy_address);
    return {};
}

genet::Genet* genet_device() { return g_genet; }

Nic* nic(size_t index) {
    if (Nic* virtio = net_device(index))
        return virtio;
    return index == 0 ? g_genet : nullptr;
}

} // namespace platform

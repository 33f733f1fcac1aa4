#include "gic_v2.h"

#include "gic_common.h"
#include "mmio.h"

#include <new>

namespace {

// Distributor (IHI 0048B 4.3) and CPU interface (4.4) offsets.
constexpr uintptr_t GICD_CTLR = 0x000;
constexpr uintptr_t GICD_TYPER = 0x004;
constexpr uintptr_t GICD_ISENABLER = 0x100;
constexpr uintptr_t GICD_ICENABLER = 0x180;
constexpr uintptr_t GICD_ICPENDR = 0x280;
constexpr uintptr_t GICD_IPRIORITYR = 0x400;
constexpr uintptr_t GICD_ITARGETSR = 0x800;
constexpr uintptr_t GICD_ICFGR = 0xc00;

constexpr uintptr_t GICC_CTLR = 0x00;
constexpr uintptr_t GICC_PMR = 0x04;
constexpr uintptr_t GICC_BPR = 0x08;
constexpr uintptr_t GICC_IAR = 0x0c;
constexpr uintptr_t GICC_EOIR = 0x10;

constexpr uint8_t kDefaultPriority = 0xa0;

alignas(GicV2) unsigned char g_storage[sizeof(GicV2)];
bool g_created = false;

} // namespace

ktl::Result<GicV2*> GicV2::create(uintptr_t distributor, uintptr_t cpu_interface) {
    if (distributor == 0 || cpu_interface == 0)
        return ktl::Error::InvalidArgs;
    if (g_created)
        return ktl::Error::Exists;
    g_created = true;
    auto* gic = new (g_storage) GicV2();
    gic->m_dist = distributor;
    gic->m_cpu = cpu_interface;
    gic->init_distributor();
    gic->init_cpu();
    return gic;
}

void GicV2::init_distributor() {
    mmio::write32(m_dist + GICD_CTLR, 0);
    uint32_t typer = mmio::read32(m_dist + GICD_TYPER);
    m_lines = 32 * ((typer & 0x1f) + 1);
    if (m_lines > 1020)
        m_lines = 1020;
    for (uint32_t i = 32; i < m_lines; i += 32) {
        mmio::write32(m_dist + GICD_ICENABLER + i / 8, 0xffffffff);
        mmio::write32(m_dist + GICD_ICPENDR + i / 8, 0xffffffff);
    }
    // Byte accesses: a word write at an unaligned byte offset faults on the GIC-400.
    for (uint32_t i = 32; i < m_lines; ++i) {
        mmio::write8(m_dist + GICD_IPRIORITYR + i, kDefaultPriority);
        mmio::write8(m_dist + GICD_ITARGETSR + i, 0x01); // CPU 0 until SMP balances
    }
    mmio::write32(m_dist + GICD_CTLR, 1);
}

void GicV2::init_cpu() {
    // Banked SGI/PPI registers: disable all, set priorities.
    mmio::write32(m_dist + GICD_ICENABLER, 0xffffffff);
    for (uint32_t i = 0; i < 32; ++i)
        mmio::write8(m_dist + GICD_IPRIORITYR + i, kDefaultPriority);
    mmio::write32(m_cpu + GICC_PMR, 0xf0);
    mmio::write32(m_cpu + GICC_BPR, 0);
    mmio::write32(m_cpu + GICC_CTLR, 1);
}

void GicV2::enable(uint32_t intid, bool edge_triggered) {
    if (intid >= m_lines)
        return;
    if (intid >= 16)
        gic::set_trigger(m_dist + GICD_ICFGR, intid, edge_triggered);
    mmio::write32(m_dist + GICD_ISENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

void GicV2::disable(uint32_t intid) {
    if (intid >= m_lines)
        return;
    mmio::write32(m_dist + GICD_ICENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

uint32_t GicV2::acknowledge() { return mmio::read32(m_cpu + GICC_IAR) & 0x3ff; }

void GicV2::end_of_interrupt(uint32_t intid) { mmio::write32(m_cpu + GICC_EOIR, intid); }

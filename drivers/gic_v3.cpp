#include "gic_v3.h"

#include "gic_common.h"
#include "mmio.h"

#include <kernel/arch/aarch64/cpu.h>

#include <new>

namespace {

// Distributor (IHI 0069 12.9), redistributor RD_base (12.10) and SGI_base (12.11) offsets.
constexpr uintptr_t GICD_CTLR = 0x0000;
constexpr uintptr_t GICD_TYPER = 0x0004;
constexpr uintptr_t GICD_IGROUPR = 0x0080;
constexpr uintptr_t GICD_ISENABLER = 0x0100;
constexpr uintptr_t GICD_ICENABLER = 0x0180;
constexpr uintptr_t GICD_ICPENDR = 0x0280;
constexpr uintptr_t GICD_IPRIORITYR = 0x0400;
constexpr uintptr_t GICD_ICFGR = 0x0c00;
constexpr uintptr_t GICD_IROUTER = 0x6000;
constexpr uint32_t GICD_CTLR_RWP = 1u << 31;
constexpr uint32_t GICD_CTLR_ARE = 1u << 4;
constexpr uint32_t GICD_CTLR_GRP1 = 1u << 1;

constexpr uintptr_t GICR_TYPER = 0x0008;
constexpr uintptr_t GICR_WAKER = 0x0014;
constexpr uint64_t GICR_TYPER_LAST = 1u << 4;
constexpr uint32_t GICR_WAKER_SLEEP = 1u << 1;
constexpr uint32_t GICR_WAKER_ASLEEP = 1u << 2;
constexpr uintptr_t kFrameStride = 0x20000; // RD_base + SGI_base, 64 KiB each (no VLPI frames)
constexpr uintptr_t kSgiOffset = 0x10000;
constexpr uintptr_t GICR_IGROUPR0 = 0x0080;
constexpr uintptr_t GICR_ISENABLER0 = 0x0100;
constexpr uintptr_t GICR_ICENABLER0 = 0x0180;
constexpr uintptr_t GICR_IPRIORITYR = 0x0400;
constexpr uintptr_t GICR_ICFGR0 = 0x0c00; // ICFGR1 (PPIs) follows at 0x0c04

constexpr uint8_t kDefaultPriority = 0xa0;

alignas(GicV3) unsigned char g_storage[sizeof(GicV3)];
bool g_created = false;

} // namespace

ktl::Result<GicV3*> GicV3::create(uintptr_t distributor, uintptr_t redistributors, uint64_t redist_size) {
    if (distributor == 0 || redistributors == 0 || redist_size < kFrameStride)
        return ktl::Error::InvalidArgs;
    if (g_created)
        return ktl::Error::Exists;
    g_created = true;
    auto* gic = new (g_storage) GicV3();
    gic->m_dist = distributor;
    gic->m_redist_base = redistributors;
    gic->m_redist_size = redist_size;
    gic->init_distributor();
    gic->init_cpu();
    if (gic->m_rd == 0)
        return ktl::Error::NotFound;
    return gic;
}

void GicV3::wait_for_rwp() const {
    for (int i = 0; i < 1000000 && (mmio::read32(m_dist + GICD_CTLR) & GICD_CTLR_RWP); ++i) {}
}

void GicV3::init_distributor() {
    mmio::write32(m_dist + GICD_CTLR, 0);
    wait_for_rwp();
    uint32_t typer = mmio::read32(m_dist + GICD_TYPER);
    m_lines = 32 * ((typer & 0x1f) + 1);
    if (m_lines > 1020)
        m_lines = 1020;
    uint64_t aff = arch::mpidr();
    uint64_t route = (aff & 0xffffff) | ((aff >> 32) & 0xff) << 32; // Aff3.Aff2.Aff1.Aff0
    for (uint32_t i = 32; i < m_lines; i += 32) {
        mmio::write32(m_dist + GICD_ICENABLER + i / 8, 0xffffffff);
        mmio::write32(m_dist + GICD_ICPENDR + i / 8, 0xffffffff);
        mmio::write32(m_dist + GICD_IGROUPR + i / 8, 0xffffffff); // non-secure group 1
    }
    for (uint32_t i = 32; i < m_lines; ++i) {
        mmio::write8(m_dist + GICD_IPRIORITYR + i, kDefaultPriority);
        mmio::write64(m_dist + GICD_IROUTER + 8 * i, route);
    }
    mmio::write32(m_dist + GICD_CTLR, GICD_CTLR_ARE);
    wait_for_rwp();
    mmio::write32(m_dist + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_GRP1);
    wait_for_rwp();
}

ktl::Result<uintptr_t> GicV3::find_redistributor(uint64_t mpidr) const {
    uint32_t want = static_cast<uint32_t>((mpidr & 0xffffff) | ((mpidr >> 32) & 0xff) << 24);
    for (uintptr_t off = 0; off + kFrameStride <= m_redist_size; off += kFrameStride) {
        uint64_t typer = mmio::read64(m_redist_base + off + GICR_TYPER);
        if (static_cast<uint32_t>(typer >> 32) == want)
            return m_redist_base + off;
        if (typer & GICR_TYPER_LAST)
            break;
    }
    return ktl::Error::NotFound;
}

void GicV3::init_cpu() {
    auto rd = find_redistributor(arch::mpidr());
    if (!rd)
        return;
    m_rd = *rd;
    m_sgi = m_rd + kSgiOffset;
    // Wake the redistributor (IHI 0069 8.9.21).
    uint32_t waker = mmio::read32(m_rd + GICR_WAKER);
    mmio::write32(m_rd + GICR_WAKER, waker & ~GICR_WAKER_SLEEP);
    for (int i = 0; i < 1000000 && (mmio::read32(m_rd + GICR_WAKER) & GICR_WAKER_ASLEEP); ++i) {}
    mmio::write32(m_sgi + GICR_ICENABLER0, 0xffffffff);
    mmio::write32(m_sgi + GICR_IGROUPR0, 0xffffffff);
    for (uint32_t i = 0; i < 32; ++i)
        mmio::write8(m_sgi + GICR_IPRIORITYR + i, kDefaultPriority);

    // System-register interface: ICC_SRE_EL1.SRE, priority mask, group 1 enable.
    uint64_t sre;
    asm volatile("mrs %0, S3_0_C12_C12_5" : "=r"(sre));
    asm volatile("msr S3_0_C12_C12_5, %0" ::"r"(sre | 1));
    arch::isb();
    asm volatile("msr S3_0_C4_C6_0, %0" ::"r"(uint64_t(0xf0))); // ICC_PMR_EL1
    asm volatile("msr S3_0_C12_C12_3, %0" ::"r"(uint64_t(0)));  // ICC_BPR1_EL1
    asm volatile("msr S3_0_C12_C12_7, %0" ::"r"(uint64_t(1)));  // ICC_IGRPEN1_EL1
    arch::isb();
}

void GicV3::enable(uint32_t intid, bool edge_triggered) {
    if (intid >= m_lines)
        return;
    if (intid < 32) {
        if (intid >= 16)
            gic::set_trigger(m_sgi + GICR_ICFGR0, intid, edge_triggered);
        mmio::write32(m_sgi + GICR_ISENABLER0, 1u << intid);
        return;
    }
    gic::set_trigger(m_dist + GICD_ICFGR, intid, edge_triggered);
    mmio::write32(m_dist + GICD_ISENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

void GicV3::disable(uint32_t intid) {
    if (intid >= m_lines)
        return;
    if (intid < 32)
        mmio::write32(m_sgi + GICR_ICENABLER0, 1u << intid);
    else
        mmio::write32(m_dist + GICD_ICENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

uint32_t GicV3::acknowledge() {
    uint64_t iar;
    asm volatile("mrs %0, S3_0_C12_C12_0" : "=r"(iar)); // ICC_IAR1_EL1
    return static_cast<uint32_t>(iar & 0xffffff);
}

void GicV3::end_of_interrupt(uint32_t intid) {
    asm volatile("msr S3_0_C12_C12_1, %0" ::"r"(uint64_t(intid))); // ICC_EOIR1_EL1
    arch::isb();
}

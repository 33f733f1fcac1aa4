#include "genet.h"

#include <new>

namespace genet {
namespace {

using namespace reg;
using namespace bits;

constexpr uint32_t kDescWords = 3;
constexpr uint32_t kPortModeExtGphy = 3;
constexpr uint32_t kMaxFrameLen = 1536;
constexpr uint32_t kScbBurst = 8;
constexpr uint32_t kLastWord = kDescWords * Genet::kDescriptors - 1;                // ring end, in descriptor words
constexpr uint32_t kRingGeometry = Genet::kDescriptors << 16 | Genet::kBufferBytes; // descriptors, buffer bytes
constexpr uint32_t kRxAlignPad = 2;   // RBUF_ALIGN_2B: two bytes before each frame
constexpr size_t kMinFrame = 60;      // without FCS: shorter frames are padded
constexpr uint32_t kMdioPolls = 2000; // x 10 us
constexpr uint64_t kLinkPollMs = 1000;

// Clause-22 PHY registers.
constexpr uint32_t kBmcr = 0, kBmsr = 1, kPhyId1 = 2, kPhyId2 = 3, kAdvertise = 4, kLpa = 5, kCtrl1000 = 9,
                   kStat1000 = 10;
constexpr uint16_t kBmcrAnEnable = 1u << 12, kBmcrAnRestart = 1u << 9;
constexpr uint16_t kBmsrLink = 1u << 2, kBmsrAnComplete = 1u << 5;

uint32_t desc(uint32_t block, uint32_t slot, uint32_t word) { return block + (slot * kDescWords + word) * 4; }

} // namespace

ktl::Result<Genet*> Genet::create(void* storage, Bus& bus, Memory memory, const uint8_t mac[6], uint32_t phy_address) {
    if (!storage || !memory.cpu || (memory.bus & 63) != 0 || phy_address > 31)
        return ktl::Error::InvalidArgs;
    auto* g = new (storage) Genet(bus, memory, phy_address);
    for (int i = 0; i < 6; ++i)
        g->m_mac[i] = mac[i];
    TRY_VOID(g->init());
    return g;
}

// Follows the order U-Boot uses on the Pi 4 (reset the MAC through its loopback so the receive
// clock is stable, program it, set up both rings with DMA off, then enable DMA), keeping the
// ring indices where the device has them: they are free-running and cannot be set to zero.
ktl::Result<void> Genet::init() {
    const uint32_t rev = m_bus.read32(kSysRevCtrl);
    if (((rev >> 24) & 0xf) != kRevisionV5)
        return ktl::Error::Unsupported;
    m_bus.write32(kSysPortCtrl, kPortModeExtGphy);
    reset_umac();
    m_bus.write32(kUmacMac0, uint32_t(m_mac[0]) << 24 | uint32_t(m_mac[1]) << 16 | uint32_t(m_mac[2]) << 8 | m_mac[3]);
    m_bus.write32(kUmacMac1, uint32_t(m_mac[4]) << 8 | m_mac[5]);

    m_bus.write32(kTdmaGlobal + kDmaCtrl, m_bus.read32(kTdmaGlobal + kDmaCtrl) & ~1u);
    m_bus.write32(kRdmaGlobal + kDmaCtrl, m_bus.read32(kRdmaGlobal + kDmaCtrl) & ~1u);
    m_bus.write32(kUmacTxFlush, 1);
    m_bus.delay_us(10);
    m_bus.write32(kUmacTxFlush, 0);
    init_rx_ring();
    init_tx_ring();
    m_bus.write32(kTdmaGlobal + kDmaCtrl, kRing16 << 1 | 1);
    m_bus.write32(kRdmaGlobal + kDmaCtrl, m_bus.read32(kRdmaGlobal + kDmaCtrl) | kRing16 << 1 | 1);

    // Interrupts: only ring 16's receive and transmit completions.
    for (uint32_t block : { kIntrl2_0, kIntrl2_1 }) {
        m_bus.write32(block + kIntMaskSet, 0xffffffffu);
        m_bus.write32(block + kIntClear, 0xffffffffu);
    }
    m_bus.write32(kIntrl2_0 + kIntMaskClear, kIrqRxDone | kIrqTxDone);

    // The PHY: who it is, then autonegotiation; the link is followed by maintain().
    auto id1 = mdio_read(kPhyId1);
    auto id2 = id1 ? mdio_read(kPhyId2) : ktl::Result<uint16_t>(id1.error());
    if (id1 && id2)
        m_phy_id = uint32_t(*id1) << 16 | *id2;
    if (auto bmcr = mdio_read(kBmcr))
        (void)mdio_write(kBmcr, static_cast<uint16_t>(*bmcr | kBmcrAnEnable | kBmcrAnRestart));
    return {};
}

void Genet::reset_umac() {
    m_bus.write32(kSysRbufFlushCtrl, m_bus.read32(kSysRbufFlushCtrl) | 2u);
    m_bus.delay_us(10);
    m_bus.write32(kSysRbufFlushCtrl, m_bus.read32(kSysRbufFlushCtrl) & ~2u);
    m_bus.delay_us(10);
    m_bus.write32(kSysRbufFlushCtrl, 0);
    m_bus.delay_us(10);
    m_bus.write32(kUmacCmd, 0);
    m_bus.write32(kUmacCmd, kCmdSwReset | kCmdLocalLoop);
    m_bus.delay_us(2);
    m_bus.write32(kUmacCmd, 0);
    m_bus.write32(kUmacMibCtrl, 7);
    m_bus.write32(kUmacMibCtrl, 0);
    m_bus.write32(kUmacMaxFrameLen, kMaxFrameLen);
    m_bus.write32(kRbufCtrl, m_bus.read32(kRbufCtrl) | kRbufAlign2B);
    m_bus.write32(kRbufTbufSizeCtrl, 1);
}

// What both rings share: burst size, the whole descriptor area, pointers at its start.
void Genet::reset_ring(uint32_t global, uint32_t ring) {
    m_bus.write32(global + kDmaScbBurst, kScbBurst);
    for (uint32_t r : { kRingStart, kRingStartHi, kRingPtr, kRingPtrHi, kRingPtr2, kRingPtr2Hi, kRingEndHi })
        m_bus.write32(ring + r, 0);
    m_bus.write32(ring + kRingEnd, kLastWord);
    m_bus.write32(ring + kRingBufSize, kRingGeometry);
}

void Genet::init_rx_ring() {
    reset_ring(kRdmaGlobal, kRdmaRing);
    m_rx_cons = static_cast<uint16_t>(m_bus.read32(kRdmaRing + kRxProd));
    m_bus.write32(kRdmaRing + kRxCons, m_rx_cons);
    m_bus.write32(kRdmaRing + kRxXonXoff, 5u << 16 | kDescriptors >> 4);
    m_bus.write32(kRdmaGlobal + kDmaRingCfg, kRing16);
    for (uint32_t i = 0; i < kDescriptors; ++i) {
        m_bus.write32(desc(kRdmaDesc, i, 1), static_cast<uint32_t>(rx_bus(i)));
        m_bus.write32(desc(kRdmaDesc, i, 2), static_cast<uint32_t>(rx_bus(i) >> 32));
        m_bus.write32(desc(kRdmaDesc, i, 0), uint32_t(kBufferBytes) << 16 | kDescOwn);
    }
}

void Genet::init_tx_ring() {
    reset_ring(kTdmaGlobal, kTdmaRing);
    m_tx_cons = static_cast<uint16_t>(m_bus.read32(kTdmaRing + kTxCons));
    m_tx_prod = m_tx_cons;
    m_bus.write32(kTdmaRing + kTxProd, m_tx_prod);
    m_bus.write32(kTdmaRing + kRingDoneThresh, 1);
    m_bus.write32(kTdmaRing + kTxFlowPeriod, 0);
    m_bus.write32(kTdmaGlobal + kDmaRingCfg, kRing16);
}

size_t Genet::receive(RxFn fn, void* ctx, size_t budget) {
    if (m_broken)
        return 0;
    const uint16_t prod = static_cast<uint16_t>(m_bus.read32(kRdmaRing + kRxProd)); // 31:16 count discards
    const uint16_t ready = static_cast<uint16_t>(prod - m_rx_cons);
    if (ready > kDescriptors) { // more than the ring holds: the indices cannot be trusted again
        ++m_rejected;
        m_broken = true;
        return 0;
    }
    size_t taken = 0;
    for (; taken < ready && taken < budget; ++taken) {
        const uint32_t slot = m_rx_cons % kDescriptors;
        const uint32_t status = m_bus.read32(desc(kRdmaDesc, slot, 0));
        const uint32_t len = (status >> 16) & 0xfff;
        const bool whole = (status & (kDescSop | kDescEop)) == (kDescSop | kDescEop);
        if (!whole || (status & kDescRxErrors) != 0 || len < kRxAlignPad + 14 || len > kBufferBytes) {
            if (len > kBufferBytes)
                ++m_rejected; // the buffer is only so long, whatever the device says
            ++m_rx_dropped;
        } else {
            // The buffer is the driver's own for this slot (never the descriptor's address, which
            // the device could change), read only after the device's writes are visible.
            uint8_t* buf = rx_buffer(slot);
            m_bus.dma_invalidate(buf, len);
            ++m_rx_frames;
            fn(ctx, buf + kRxAlignPad, len - kRxAlignPad);
        }
        m_rx_cons = static_cast<uint16_t>(m_rx_cons + 1);
        m_bus.write32(kRdmaRing + kRxCons, m_rx_cons);
    }
    return taken;
}

uint8_t* Genet::tx_acquire(size_t& capacity) {
    if (m_tx_open)
        return nullptr;
    if (static_cast<uint16_t>(m_tx_prod - m_tx_cons) >= kDescriptors - 1)
        reclaim_tx();
    if (static_cast<uint16_t>(m_tx_prod - m_tx_cons) >= kDescriptors - 1)
        return nullptr; // every buffer is with the device
    m_tx_open = true;
    capacity = kMaxFrame;
    return tx_buffer(m_tx_prod % kDescriptors);
}

void Genet::tx_submit(size_t len) {
    if (!m_tx_open)
        return;
    m_tx_open = false;
    if (len == 0 || len > kMaxFrame)
        return; // released unsent
    const uint32_t slot = m_tx_prod % kDescriptors;
    uint8_t* buf = tx_buffer(slot);
    for (; len < kMinFrame; ++len)
        buf[len] = 0;
    m_bus.dma_clean(buf, len);
    m_bus.write32(desc(kTdmaDesc, slot, 1), static_cast<uint32_t>(tx_bus(slot)));
    m_bus.write32(desc(kTdmaDesc, slot, 2), static_cast<uint32_t>(tx_bus(slot) >> 32));
    m_bus.write32(desc(kTdmaDesc, slot, 0),
                  static_cast<uint32_t>(len) << 16 | kDescTxQtag | kDescTxAppendCrc | kDescSop | kDescEop);
    m_tx_prod = static_cast<uint16_t>(m_tx_prod + 1);
    m_bus.write32(kTdmaRing + kTxProd, m_tx_prod);
    ++m_tx_frames;
}

size_t Genet::reclaim_tx() {
    const uint16_t cons = static_cast<uint16_t>(m_bus.read32(kTdmaRing + kTxCons));
    const uint16_t done = static_cast<uint16_t>(cons - m_tx_cons);
    if (done > static_cast<uint16_t>(m_tx_prod - m_tx_cons)) {
        ++m_rejected; // finished more than it was given
        return 0;
    }
    m_tx_cons = cons;
    return done;
}

ktl::Result<uint16_t> Genet::mdio_read(uint32_t reg) {
    m_bus.write32(kMdioCmd, kMdioRead | m_phy << 21 | (reg & 0x1f) << 16);
    m_bus.write32(kMdioCmd, m_bus.read32(kMdioCmd) | kMdioStartBusy);
    for (uint32_t i = 0; i < kMdioPolls; ++i) {
        const uint32_t v = m_bus.read32(kMdioCmd);
        if (!(v & kMdioStartBusy)) {
            if (v & kMdioReadFail)
                return ktl::Error::NotFound;
            return static_cast<uint16_t>(v & 0xffff);
        }
        m_bus.delay_us(10);
    }
    return ktl::Error::TimedOut;
}

ktl::Result<void> Genet::mdio_write(uint32_t reg, uint16_t value) {
    m_bus.write32(kMdioCmd, kMdioWrite | m_phy << 21 | (reg & 0x1f) << 16 | value);
    m_bus.write32(kMdioCmd, m_bus.read32(kMdioCmd) | kMdioStartBusy);
    for (uint32_t i = 0; i < kMdioPolls; ++i) {
        if (!(m_bus.read32(kMdioCmd) & kMdioStartBusy))
            return {};
        m_bus.delay_us(10);
    }
    return ktl::Error::TimedOut;
}

uint32_t Genet::maintain(uint64_t now_ms) {
    if (now_ms < m_next_poll_ms)
        return static_cast<uint32_t>(m_next_poll_ms - now_ms);
    m_next_poll_ms = now_ms + kLinkPollMs;
    (void)mdio_read(kBmsr); // the link bit latches low: the second read is the state now
    auto bmsr = mdio_read(kBmsr);
    const bool up = bmsr && (*bmsr & kBmsrLink) && (*bmsr & kBmsrAnComplete);
    if (up != m_link)
        link_changed(up);
    return kLinkPollMs;
}

// The speed both ends advertised; the MAC and its RGMII interface follow. ID_MODE_DIS as U-Boot
// sets it for the Pi 4's "rgmii-rxid" with the PHY at its power-on delays.
void Genet::link_changed(bool up) {
    m_link = up;
    uint32_t oob = m_bus.read32(kExtRgmiiOobCtrl);
    if (!up) {
        m_speed = 0;
        m_bus.write32(kExtRgmiiOobCtrl, oob & ~kOobLink);
        return;
    }
    auto ctrl1000 = mdio_read(kCtrl1000), stat1000 = mdio_read(kStat1000), adv = mdio_read(kAdvertise),
         lpa = mdio_read(kLpa);
    uint32_t speed_code = 0;
    m_speed = 10;
    m_full_duplex = false;
    const uint32_t giga = ctrl1000 && stat1000 ? (*stat1000 & (uint32_t(*ctrl1000) << 2)) : 0;
    const uint32_t common = adv && lpa ? (*adv & *lpa) : 0;
    if (giga & 0xc00) {
        speed_code = 2;
        m_speed = 1000;
        m_full_duplex = (giga & 0x800) != 0;
    } else if (common & 0x180) {
        speed_code = 1;
        m_speed = 100;
        m_full_duplex = (common & 0x100) != 0;
    } else {
        m_full_duplex = (common & 0x40) != 0;
    }
    oob &= ~kOobDisable;
    oob |= kOobLink | kOobRgmiiModeEn | kOobIdModeDis;
    m_bus.write32(kExtRgmiiOobCtrl, oob);
    m_bus.write32(kUmacCmd, speed_code << kCmdSpeedShift | (m_full_duplex ? 0 : 1u << 10) | kCmdTxEn | kCmdRxEn);
}

void Genet::handle_irq() {
    const uint32_t pending = m_bus.read32(kIntrl2_0 + kIntStat) & ~m_bus.read32(kIntrl2_0 + kIntMaskStatus);
    m_bus.write32(kIntrl2_0 + kIntClear, pending);
    m_irqs = m_irqs + 1;
    notify();
}

} // namespace genet

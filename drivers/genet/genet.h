#pragma once
// The Raspberry Pi 4's Ethernet controller: Broadcom GENET v5 (`brcm,bcm2711-genet-v5`), a UniMAC
// with descriptor-ring DMA, talking RGMII to a BCM54213PE PHY over MDIO. One receive and one
// transmit ring (ring 16, the default ring that takes all traffic without filter setup), 256
// descriptors each, held in the controller's registers; the buffers are the driver's, one 2 KiB
// buffer per descriptor, never handed to anyone else.
//
// Nothing the device reports is trusted: a receive index running ahead by more than the ring
// marks the device broken, lengths beyond a buffer and frames with error flags are dropped, a
// transmit consumer index beyond what was queued is refused, MDIO waits are bounded. The
// register bus is an interface so that the host tests run this very code against a model of the
// device (tests/host/genet_test.cpp), a misbehaving one included; the kernel's bus is MMIO.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "../nic.h"

namespace genet {

// Register access and the platform services DMA needs. The kernel's implementation
// (drivers/genet/genet_mmio.h) does MMIO at the controller's base and cache maintenance.
class Bus {
public:
    virtual uint32_t read32(uint32_t offset) = 0;
    virtual void write32(uint32_t offset, uint32_t value) = 0;
    virtual void delay_us(uint32_t us) = 0;
    // The device reads transmit buffers and writes receive buffers behind the CPU's caches.
    virtual void dma_clean(const void* p, size_t bytes) = 0;
    virtual void dma_invalidate(const void* p, size_t bytes) = 0;

protected:
    ~Bus() = default;
};

// Register offsets from the controller's base (GENET v5), for the driver and the device model.
namespace reg {
constexpr uint32_t kSysRevCtrl = 0x0000, kSysPortCtrl = 0x0004, kSysRbufFlushCtrl = 0x0008;
constexpr uint32_t kExtRgmiiOobCtrl = 0x008c;
constexpr uint32_t kIntrl2_0 = 0x0200, kIntrl2_1 = 0x0240; // + kIntStat, kIntClear, ...
constexpr uint32_t kIntStat = 0x00, kIntClear = 0x08, kIntMaskStatus = 0x0c, kIntMaskSet = 0x10, kIntMaskClear = 0x14;
constexpr uint32_t kRbufCtrl = 0x0300, kRbufTbufSizeCtrl = 0x03b4, kTbufCtrl = 0x0600;
constexpr uint32_t kUmacCmd = 0x0808, kUmacMac0 = 0x080c, kUmacMac1 = 0x0810, kUmacMaxFrameLen = 0x0814;
constexpr uint32_t kUmacTxFlush = 0x0b34, kUmacMibCtrl = 0x0d80, kMdioCmd = 0x0e14;
constexpr uint32_t kRdmaDesc = 0x2000, kTdmaDesc = 0x4000; // 256 descriptors of 3 words each
constexpr uint32_t kRdmaRing = 0x3000, kTdmaRing = 0x5000; // ring 16's registers
constexpr uint32_t kRdmaGlobal = 0x3040, kTdmaGlobal = 0x5040;
// Ring registers (offsets in kRdmaRing / kTdmaRing). RX: the device advances PROD, the driver
// CONS; TX: the driver advances PROD, the device CONS. Both are 16-bit counters in bits 15:0.
constexpr uint32_t kRingPtr = 0x00, kRingPtrHi = 0x04, kRxProd = 0x08, kRxCons = 0x0c, kTxCons = 0x08, kTxProd = 0x0c;
constexpr uint32_t kRingBufSize = 0x10, kRingStart = 0x14, kRingStartHi = 0x18, kRingEnd = 0x1c, kRingEndHi = 0x20;
constexpr uint32_t kRingDoneThresh = 0x24, kRxXonXoff = 0x28, kTxFlowPeriod = 0x28, kRingPtr2 = 0x2c,
                   kRingPtr2Hi = 0x30;
// Global DMA registers (offsets in kRdmaGlobal / kTdmaGlobal).
constexpr uint32_t kDmaRingCfg = 0x00, kDmaCtrl = 0x04, kDmaStatus = 0x08, kDmaScbBurst = 0x0c;
} // namespace reg

namespace bits {
constexpr uint32_t kCmdTxEn = 1u << 0, kCmdRxEn = 1u << 1, kCmdSpeedShift = 2, kCmdSwReset = 1u << 13,
                   kCmdLocalLoop = 1u << 15;
constexpr uint32_t kMdioStartBusy = 1u << 29, kMdioReadFail = 1u << 28, kMdioRead = 2u << 26, kMdioWrite = 1u << 26;
constexpr uint32_t kOobLink = 1u << 4, kOobDisable = 1u << 5, kOobRgmiiModeEn = 1u << 6, kOobIdModeDis = 1u << 16;
constexpr uint32_t kRbufAlign2B = 1u << 1;
constexpr uint32_t kDescOwn = 0x8000, kDescEop = 0x4000, kDescSop = 0x2000, kDescTxAppendCrc = 0x0040,
                   kDescTxQtag = 0x3f << 7;
constexpr uint32_t kDescRxErrors = 0x001f; // OV, CRC error, RXER, NO, LG
constexpr uint32_t kIrqRxDone = 1u << 13, kIrqTxDone = 1u << 16;
constexpr uint32_t kRing16 = 1u << 16;
} // namespace bits

class Genet final : public Nic {
public:
    static constexpr uint32_t kDescriptors = 256;
    static constexpr size_t kBufferBytes = 2048;
    static constexpr size_t kMaxFrame = 1514;  // Ethernet header + 1500, no FCS (the MAC adds it)
    static constexpr uint32_t kRevisionV5 = 6; // SYS_REV_CTRL bits 27:24

    // DMA memory for the buffers: 2 * kDescriptors * kBufferBytes bytes, 64-byte aligned; `bus`
    // is its address as the controller sees it.
    struct Memory {
        uint8_t* cpu;
        uint64_t bus;
    };
    static constexpr size_t kMemoryBytes = 2 * kDescriptors * kBufferBytes;

    // Resets and programs the controller and starts PHY autonegotiation. Unsupported: not a
    // GENET v5. The object lives in `storage` (placement; the kernel has no allocator at probe).
    static ktl::Result<Genet*> create(void* storage, Bus& bus, Memory memory, const uint8_t mac[6],
                                      uint32_t phy_address);

    // Nic.
    size_t receive(RxFn fn, void* ctx, size_t budget) override;
    uint8_t* tx_acquire(size_t& capacity) override;
    void tx_submit(size_t len) override;
    size_t reclaim_tx() override;
    const uint8_t* mac() const override { return m_mac; }
    bool link_up() const override { return m_link; }
    Counters counters() const override { return { m_irqs, m_rx_frames, m_rx_dropped, m_tx_frames }; }
    // Once a second: the PHY's link state; on a change the MAC follows (speed, RGMII link).
    uint32_t maintain(uint64_t now_ms) override;

    // Interrupt path: acknowledge, count, wake the owner.
    static void irq_entry(void* self) { static_cast<Genet*>(self)->handle_irq(); }

    // MDIO (Clause 22) to the PHY: bounded waits (TimedOut), NotFound when the PHY does not answer.
    ktl::Result<uint16_t> mdio_read(uint32_t reg);
    ktl::Result<void> mdio_write(uint32_t reg, uint16_t value);

    struct Stats {
        uint32_t phy_id;
        uint32_t speed_mbps; // 0 while the link is down
        bool full_duplex;
        uint64_t rejected; // reports the device should never make (indices, lengths)
        bool broken;       // the receive ring lost sync: no further frames are taken
    };
    Stats stats() const { return { m_phy_id, m_speed, m_full_duplex, m_rejected, m_broken }; }

    Genet(Bus& bus, Memory memory, uint32_t phy) : m_bus(bus), m_mem(memory), m_phy(phy) {}

private:
    ktl::Result<void> init();
    void reset_umac();
    void reset_ring(uint32_t global, uint32_t ring);
    void init_rx_ring();
    void init_tx_ring();
    void link_changed(bool up);
    void handle_irq();
    uint8_t* rx_buffer(uint32_t slot) const { return m_mem.cpu + slot * kBufferBytes; }
    uint8_t* tx_buffer(uint32_t slot) const { return m_mem.cpu + (kDescriptors + slot) * kBufferBytes; }
    uint64_t rx_bus(uint32_t slot) const { return m_mem.bus + slot * kBufferBytes; }
    uint64_t tx_bus(uint32_t slot) const { return m_mem.bus + (kDescriptors + slot) * kBufferBytes; }

    Bus& m_bus;
    Memory m_mem;
    uint32_t m_phy;
    uint8_t m_mac[6] = {};
    uint16_t m_rx_cons = 0; // next receive index to take
    uint16_t m_tx_prod = 0; // next transmit index to fill
    uint16_t m_tx_cons = 0; // transmit index the device has finished up to
    bool m_tx_open = false; // a buffer acquired, not yet submitted
    bool m_link = false;
    bool m_broken = false;
    uint32_t m_phy_id = 0, m_speed = 0;
    bool m_full_duplex = false;
    uint64_t m_next_poll_ms = 0;
    volatile uint64_t m_irqs = 0;
    uint64_t m_rx_frames = 0, m_rx_dropped = 0, m_tx_frames = 0, m_rejected = 0;
};

} // namespace genet

#pragma once
// A model of the GENET v5 controller as the driver sees it (drivers/genet/genet.h): registers,
// the descriptor rings in register space, DMA into and out of host memory (bus address = host
// pointer), MDIO to a Clause-22 PHY, interrupts. Written from the same register facts as the
// driver (GENET v5 as U-Boot, Linux and FreeBSD program it), so it checks the driver's logic
// against them: ring accounting across the 16-bit index wrap, buffers, lengths, link handling;
// and it misbehaves on request, as a broken or hostile device would.
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include <drivers/genet/genet.h>

namespace genet_test {

using namespace genet::reg;
using namespace genet::bits;

class Model final : public genet::Bus {
public:
    // PHY registers (Clause 22), address 1 as on the Pi 4.
    uint16_t phy[32] = {};
    uint32_t phy_address = 1;
    uint32_t revision = 0x06000000;
    // Misbehaviour switches.
    bool mdio_stuck = false;                // START_BUSY never clears
    uint32_t rx_status_or = 0;              // bits forced into every received descriptor
    uint32_t rx_length_override = 0;        // a length to report instead of the frame's
    uint16_t tx_cons_extra = 0;             // the consumer index runs this far beyond the producer
    std::vector<std::vector<uint8_t>> wire; // frames the device sent, in order
    uint64_t cleaned = 0, invalidated = 0;

    Model() {
        phy[2] = 0x600d;
        phy[3] = 0x84a2;
        phy[1] = 0x7949; // capabilities; link and autonegotiation bits set by link()
        phy[4] = 0x01e1;
        phy[9] = 0x0200;
    }

    void link(bool up, bool gigabit = true) {
        phy[1] = static_cast<uint16_t>(up ? (phy[1] | 0x24) : (phy[1] & ~0x24));
        phy[5] = up ? 0x45e1 : 0;
        phy[10] = up && gigabit ? 0x3800 : 0;
    }

    // Where the indices start: free-running counters, not zero after a firmware or U-Boot run.
    void start_indices(uint16_t rx_prod, uint16_t tx_cons) {
        regs[kRdmaRing + kRxProd] = rx_prod;
        regs[kTdmaRing + kTxCons] = tx_cons;
        m_tx_cons = tx_cons;
    }

    uint32_t get(uint32_t offset) const {
        auto it = regs.find(offset);
        return it == regs.end() ? 0 : it->second;
    }

    // A frame arrives: DMA'd into the next descriptor's buffer after the 2 pad bytes. False when
    // the ring is full (the device would drop it).
    bool arrive(const std::vector<uint8_t>& frame) {
        const uint16_t prod = static_cast<uint16_t>(get(kRdmaRing + kRxProd));
        const uint16_t cons = static_cast<uint16_t>(get(kRdmaRing + kRxCons));
        if (static_cast<uint16_t>(prod - cons) >= genet::Genet::kDescriptors)
            return false;
        const uint32_t slot = prod % genet::Genet::kDescriptors;
        const uint64_t addr = uint64_t(get(desc(kRdmaDesc, slot, 2))) << 32 | get(desc(kRdmaDesc, slot, 1));
        auto* buf = reinterpret_cast<uint8_t*>(addr);
        buf[0] = buf[1] = 0xee;
        std::memcpy(buf + 2, frame.data(), frame.size());
        const uint32_t len = rx_length_override ? rx_length_override : static_cast<uint32_t>(frame.size() + 2);
        regs[desc(kRdmaDesc, slot, 0)] = (len & 0xfff) << 16 | kDescSop | kDescEop | rx_status_or;
        regs[kRdmaRing + kRxProd] = (get(kRdmaRing + kRxProd) & 0xffff0000u) | static_cast<uint16_t>(prod + 1);
        regs[kIntrl2_0 + kIntStat] |= kIrqRxDone;
        return true;
    }

    // Misbehaviour: the producer index jumps.
    void jump_rx_producer(uint16_t by) {
        regs[kRdmaRing + kRxProd] = static_cast<uint16_t>(get(kRdmaRing + kRxProd) + by);
    }

    // genet::Bus
    uint32_t read32(uint32_t offset) override { return offset == kSysRevCtrl ? revision : get(offset); }
    void write32(uint32_t offset, uint32_t value) override {
        regs[offset] = value;
        if (offset == kMdioCmd && (value & kMdioStartBusy) && !mdio_stuck)
            mdio(value);
        if (offset == kTdmaRing + kTxProd)
            transmit(static_cast<uint16_t>(value));
        if (offset == kIntrl2_0 + kIntClear)
            regs[kIntrl2_0 + kIntStat] &= ~value;
        if (offset == kIntrl2_0 + kIntMaskSet)
            regs[kIntrl2_0 + kIntMaskStatus] |= value;
        if (offset == kIntrl2_0 + kIntMaskClear)
            regs[kIntrl2_0 + kIntMaskStatus] &= ~value;
    }
    void delay_us(uint32_t) override {}
    void dma_clean(const void*, size_t) override { ++cleaned; }
    void dma_invalidate(const void*, size_t) override { ++invalidated; }

    std::map<uint32_t, uint32_t> regs;

    static uint32_t desc(uint32_t block, uint32_t slot, uint32_t word) { return block + (slot * 3 + word) * 4; }

private:
    void mdio(uint32_t cmd) {
        const uint32_t address = (cmd >> 21) & 0x1f, reg = (cmd >> 16) & 0x1f;
        uint32_t out = cmd & ~kMdioStartBusy;
        if (address != phy_address) {
            out |= kMdioReadFail;
        } else if ((cmd & (3u << 26)) == kMdioRead) {
            out = (out & 0xffff0000u) | phy[reg];
        } else {
            phy[reg] = static_cast<uint16_t>(cmd);
            if (reg == 0)
                phy[0] &= static_cast<uint16_t>(~(1u << 9)); // the restart bit self-clears
        }
        regs[kMdioCmd] = out;
    }

    // The device sends every descriptor from its consumer index to the new producer index.
    void transmit(uint16_t prod) {
        for (int guard = 0; m_tx_cons != prod && guard < 65536; ++guard) {
            const uint32_t slot = m_tx_cons % genet::Genet::kDescriptors;
            const uint32_t status = get(desc(kTdmaDesc, slot, 0));
            const uint64_t addr = uint64_t(get(desc(kTdmaDesc, slot, 2))) << 32 | get(desc(kTdmaDesc, slot, 1));
            const uint32_t len = (status >> 16) & 0xfff;
            const auto* buf = reinterpret_cast<const uint8_t*>(addr);
            wire.emplace_back(buf, buf + len);
            m_tx_cons = static_cast<uint16_t>(m_tx_cons + 1);
        }
        regs[kTdmaRing + kTxCons] = static_cast<uint16_t>(m_tx_cons + tx_cons_extra);
        regs[kIntrl2_0 + kIntStat] |= kIrqTxDone;
    }

    uint16_t m_tx_cons = 0;
};

} // namespace genet_test

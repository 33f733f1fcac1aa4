// The Pi 4's GENET driver (drivers/genet) against a model of the controller
// (support/genet_model.h): the programming the board needs, frames both ways across the 16-bit
// index wrap, the link followed from the PHY, and a device that misbehaves.
#include <cstdlib>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "support/genet_model.h"

using genet::Genet;
using genet_test::Model;
using namespace genet::reg;
using namespace genet::bits;

namespace {

const uint8_t kMac[6] = { 0xdc, 0xa6, 0x32, 0x01, 0x02, 0x03 };

struct Rig {
    Model model;
    std::unique_ptr<uint8_t, decltype(&std::free)> memory {
        static_cast<uint8_t*>(std::aligned_alloc(64, Genet::kMemoryBytes)), &std::free
    };
    alignas(Genet) uint8_t storage[sizeof(Genet)];
    Genet* nic = nullptr;

    ktl::Result<Genet*> start() {
        auto r = Genet::create(storage, model, { memory.get(), reinterpret_cast<uint64_t>(memory.get()) }, kMac, 1);
        if (r)
            nic = *r;
        return r;
    }
};

std::vector<uint8_t> frame(uint32_t n, size_t len = 64) {
    std::vector<uint8_t> f(len);
    for (size_t i = 0; i < len; ++i)
        f[i] = static_cast<uint8_t>(n * 7 + i);
    return f;
}

struct Received {
    std::vector<std::vector<uint8_t>> frames;
};

void collect(void* ctx, const uint8_t* data, size_t len) {
    static_cast<Received*>(ctx)->frames.emplace_back(data, data + len);
}

bool send(Genet& nic, const std::vector<uint8_t>& f) {
    size_t capacity = 0;
    uint8_t* buf = nic.tx_acquire(capacity);
    if (!buf || capacity < f.size())
        return false;
    std::copy(f.begin(), f.end(), buf);
    nic.tx_submit(f.size());
    return true;
}

} // namespace

TEST(Genet, ProgramsTheControllerAsThePi4NeedsIt) {
    Rig rig;
    rig.model.start_indices(0x1234, 0xbeef);
    ASSERT_TRUE(rig.start().ok());
    const Model& m = rig.model;
    EXPECT_EQ(m.get(kSysPortCtrl), 3u) << "external RGMII PHY";
    EXPECT_EQ(m.get(kUmacMac0), 0xdca63201u);
    EXPECT_EQ(m.get(kUmacMac1), 0x0203u);
    EXPECT_EQ(m.get(kUmacMaxFrameLen), 1536u);
    EXPECT_TRUE(m.get(kRbufCtrl) & kRbufAlign2B);
    for (uint32_t ring : { kRdmaRing, kTdmaRing }) {
        EXPECT_EQ(m.get(ring + kRingBufSize), 0x01000800u);
        EXPECT_EQ(m.get(ring + kRingEnd), 767u);
    }
    EXPECT_EQ(m.get(kRdmaGlobal + kDmaRingCfg), kRing16);
    EXPECT_EQ(m.get(kTdmaGlobal + kDmaRingCfg), kRing16);
    EXPECT_EQ(m.get(kRdmaGlobal + kDmaCtrl) & 0x20001u, 0x20001u);
    EXPECT_EQ(m.get(kTdmaGlobal + kDmaCtrl), 0x20001u);
    EXPECT_EQ(m.get(kRdmaRing + kRxCons), 0x1234u) << "the consumer index starts where the device's producer is";
    EXPECT_EQ(m.get(kTdmaRing + kTxProd), 0xbeefu);
    EXPECT_EQ(m.get(kIntrl2_0 + kIntMaskStatus), ~(kIrqRxDone | kIrqTxDone));
    // Every receive descriptor points at a buffer of the driver's memory, 2 KiB apart.
    for (uint32_t i = 0; i < Genet::kDescriptors; ++i)
        EXPECT_EQ(m.get(Model::desc(kRdmaDesc, i, 1)),
                  static_cast<uint32_t>(reinterpret_cast<uint64_t>(rig.memory.get()) + i * 2048));
    EXPECT_EQ(rig.nic->stats().phy_id, 0x600d84a2u) << "the BCM54213PE answers at MDIO address 1";
    EXPECT_TRUE(m.phy[0] & (1u << 12)) << "autonegotiation enabled";
}

TEST(Genet, RefusesAnotherRevision) {
    Rig rig;
    rig.model.revision = 0x05000000; // GENET v4
    EXPECT_EQ(rig.start().error(), ktl::Error::Unsupported);
}

TEST(Genet, FollowsTheLink) {
    Rig rig;
    ASSERT_TRUE(rig.start().ok());
    rig.nic->maintain(1000);
    EXPECT_FALSE(rig.nic->link_up());
    rig.model.link(true);
    rig.nic->maintain(1500); // polled once a second
    EXPECT_FALSE(rig.nic->link_up());
    rig.nic->maintain(2000);
    ASSERT_TRUE(rig.nic->link_up());
    EXPECT_EQ(rig.nic->stats().speed_mbps, 1000u);
    const uint32_t cmd = rig.model.get(kUmacCmd);
    EXPECT_EQ((cmd >> kCmdSpeedShift) & 3, 2u);
    EXPECT_EQ(cmd & (kCmdTxEn | kCmdRxEn), kCmdTxEn | kCmdRxEn);
    const uint32_t oob = rig.model.get(kExtRgmiiOobCtrl);
    EXPECT_EQ(oob & (kOobLink | kOobRgmiiModeEn | kOobDisable), kOobLink | kOobRgmiiModeEn);
    rig.model.link(false);
    rig.nic->maintain(3000);
    EXPECT_FALSE(rig.nic->link_up());
    EXPECT_FALSE(rig.model.get(kExtRgmiiOobCtrl) & kOobLink);
    rig.model.link(true, false); // a 100 Mb/s partner
    rig.nic->maintain(4000);
    EXPECT_EQ(rig.nic->stats().speed_mbps, 100u);
    EXPECT_EQ((rig.model.get(kUmacCmd) >> kCmdSpeedShift) & 3, 1u);
}

TEST(Genet, FramesBothWaysAcrossTheIndexWrap) {
    Rig rig;
    rig.model.start_indices(0xff80, 0xff90); // both counters wrap past 0xffff during the test
    ASSERT_TRUE(rig.start().ok());
    Received got;
    uint32_t sent = 0, arrived = 0;
    for (int round = 0; round < 10; ++round) {
        for (int i = 0; i < 100; ++i)
            if (rig.model.arrive(frame(arrived, 60 + arrived % 1400)))
                ++arrived;
        while (rig.nic->receive(collect, &got, 32) > 0) {}
        for (int i = 0; i < 90; ++i) {
            ASSERT_TRUE(send(*rig.nic, frame(10000 + sent, 14 + sent % 1500))) << "frame " << sent;
            ++sent;
        }
        rig.nic->reclaim_tx();
    }
    ASSERT_EQ(got.frames.size(), arrived);
    for (uint32_t i = 0; i < arrived; ++i)
        ASSERT_EQ(got.frames[i], frame(i, 60 + i % 1400)) << "received frame " << i;
    ASSERT_EQ(rig.model.wire.size(), sent);
    for (uint32_t i = 0; i < sent; ++i) {
        auto want = frame(10000 + i, 14 + i % 1500);
        if (want.size() < 60)
            want.resize(60, 0); // runts padded with zeros
        ASSERT_EQ(rig.model.wire[i], want) << "sent frame " << i;
    }
    EXPECT_GT(rig.model.get(kRdmaRing + kRxCons), 0u);
    EXPECT_LT(rig.model.get(kRdmaRing + kRxCons), 0xff80u) << "the receive index wrapped";
    EXPECT_EQ(rig.nic->counters().rx_frames, arrived);
    EXPECT_EQ(rig.nic->counters().tx_frames, sent);
    EXPECT_EQ(rig.model.invalidated, arrived);
    EXPECT_EQ(rig.model.cleaned, sent);
}

TEST(Genet, TransmitRingFullThenFreed) {
    Rig rig;
    ASSERT_TRUE(rig.start().ok());
    rig.model.tx_cons_extra = 0;
    // The model finishes each frame at once, so fill the ring by holding its consumer back.
    uint32_t accepted = 0;
    rig.model.regs[kTdmaRing + kTxCons] = 0;
    for (int i = 0; i < 300; ++i) {
        size_t capacity = 0;
        if (!rig.nic->tx_acquire(capacity))
            break;
        rig.nic->tx_submit(100);
        ++accepted;
        rig.model.regs[kTdmaRing + kTxCons] = 0; // not yet finished, as far as the driver can see
    }
    EXPECT_EQ(accepted, Genet::kDescriptors - 1) << "one descriptor always stays free";
    size_t capacity = 0;
    EXPECT_EQ(rig.nic->tx_acquire(capacity), nullptr);
    rig.model.regs[kTdmaRing + kTxCons] = accepted; // all finished
    EXPECT_NE(rig.nic->tx_acquire(capacity), nullptr) << "reclaimed when full";
    rig.nic->tx_submit(0); // released unsent
    EXPECT_EQ(rig.model.wire.size(), accepted);
}

TEST(Genet, MisbehavingDeviceIsDistrusted) {
    Rig rig;
    ASSERT_TRUE(rig.start().ok());
    Received got;
    // A length beyond the buffer, and error flags: dropped, the ring still advances.
    rig.model.rx_length_override = 0xfff;
    ASSERT_TRUE(rig.model.arrive(frame(1)));
    rig.model.rx_length_override = 0;
    rig.model.rx_status_or = 0x0002; // CRC error
    ASSERT_TRUE(rig.model.arrive(frame(2)));
    rig.model.rx_status_or = 0;
    ASSERT_TRUE(rig.model.arrive(frame(3)));
    EXPECT_EQ(rig.nic->receive(collect, &got, 32), 3u);
    ASSERT_EQ(got.frames.size(), 1u);
    EXPECT_EQ(got.frames[0], frame(3));
    EXPECT_EQ(rig.nic->counters().rx_dropped, 2u);
    EXPECT_EQ(rig.nic->stats().rejected, 1u);

    // A transmit consumer index beyond what was queued: refused, nothing reclaimed twice.
    rig.model.tx_cons_extra = 5;
    ASSERT_TRUE(send(*rig.nic, frame(4)));
    EXPECT_EQ(rig.nic->reclaim_tx(), 0u);
    EXPECT_EQ(rig.nic->stats().rejected, 2u);
    rig.model.tx_cons_extra = 0;

    // A producer index that runs more than a ring ahead: broken, nothing more is read.
    rig.model.jump_rx_producer(1000);
    EXPECT_EQ(rig.nic->receive(collect, &got, 32), 0u);
    EXPECT_TRUE(rig.nic->stats().broken);
    ASSERT_TRUE(rig.model.arrive(frame(5)) || true);
    EXPECT_EQ(rig.nic->receive(collect, &got, 32), 0u);
    EXPECT_EQ(got.frames.size(), 1u);
}

TEST(Genet, MdioThatNeverAnswersIsBounded) {
    Rig rig;
    rig.model.mdio_stuck = true;
    ASSERT_TRUE(rig.start().ok()) << "the MAC works without its PHY's identity";
    EXPECT_EQ(rig.nic->stats().phy_id, 0u);
    EXPECT_EQ(rig.nic->mdio_read(1).error(), ktl::Error::TimedOut);
    rig.nic->maintain(5000);
    EXPECT_FALSE(rig.nic->link_up());
    Rig absent;
    absent.model.phy_address = 7; // nothing at address 1
    ASSERT_TRUE(absent.start().ok());
    EXPECT_EQ(absent.nic->mdio_read(2).error(), ktl::Error::NotFound);
}

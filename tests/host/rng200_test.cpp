// drivers/rng200: the BCM2711's RNG200 against a model of its registers (QEMU's raspi4b has none).
// The model produces bits as time passes (delay_us), fills a FIFO with words only after a reset
// and once enabled, and can be made stuck, dead, or report a NIST self-test failure or a lockout.
// Checked: nothing is taken before the warm-up and the first words are thrown away; what read()
// hands out is exactly the device's words after that; a stuck source is refused and given up; a
// dead one makes start() fail within its bound; a reported failure resets the device and the
// warm-up is waited out again.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include <drivers/rng200/rng200.h>

namespace {

using namespace rng200;

class Model final : public Bus {
public:
    enum class Mode { Working, Stuck, Zeros, Dead };
    explicit Model(Mode mode = Mode::Working, uint32_t seed = 1) : m_mode(mode), m_rng(seed) {}

    uint32_t read32(uint32_t offset) override {
        switch (offset) {
        case reg::kCtrl: return m_ctrl;
        case reg::kTotalBits: return m_bits;
        case reg::kTotalBitsThreshold: return m_threshold;
        case reg::kIntStatus: return m_int;
        case reg::kFifoCount: return static_cast<uint32_t>(m_fifo.size()) | (m_fifo_threshold << 8);
        case reg::kFifoData: {
            if (m_fifo.empty())
                return 0;
            const uint32_t w = m_fifo.front();
            m_fifo.pop_front();
            if (m_bits < kWarmupBits)
                ++taken_before_warmup;
            taken.push_back(w);
            return w;
        }
        default: return 0;
        }
    }
    void write32(uint32_t offset, uint32_t value) override {
        switch (offset) {
        case reg::kCtrl:
            if ((value & kCtrlEnable) && !(m_ctrl & kCtrlEnable))
                ++enables;
            m_ctrl = value;
            break;
        case reg::kSoftReset:
            if (value & 1) {
                ++soft_resets;
                m_bits = 0;
                m_fifo.clear();
                m_int = 0;
            }
            break;
        case reg::kRbgSoftReset: break;
        case reg::kTotalBitsThreshold: m_threshold = value; break;
        case reg::kIntStatus: m_int &= ~value; break;
        case reg::kFifoCount: m_fifo_threshold = (value >> 8) & 0xff; break;
        default: break;
        }
    }
    // Time passes: an enabled generator makes 32 bits a microsecond (words once warmed up).
    void delay_us(uint32_t us) override {
        now_us += us;
        if (!(m_ctrl & kCtrlEnable) || m_mode == Mode::Dead)
            return;
        for (uint32_t i = 0; i < us; ++i) {
            m_bits += 32;
            if (m_bits >= kWarmupBits && m_fifo.size() < 32)
                m_fifo.push_back(next_word());
        }
    }
    void fail(uint32_t bits) { m_int |= bits; }
    void set_mode(Mode mode) { m_mode = mode; }

    std::vector<uint32_t> taken; // every word read from the FIFO, in order
    uint64_t now_us = 0;
    int taken_before_warmup = 0, soft_resets = 0, enables = 0;

private:
    uint32_t next_word() {
        switch (m_mode) {
        case Mode::Stuck: return 0x5a5a1234u;
        case Mode::Zeros: return 0;
        default: return static_cast<uint32_t>(m_rng());
        }
    }
    Mode m_mode;
    std::mt19937 m_rng;
    uint32_t m_ctrl = 0, m_bits = 0, m_threshold = 0, m_int = 0, m_fifo_threshold = 0;
    std::deque<uint32_t> m_fifo;
};

// Reads until `bytes` came (bounded), letting time pass between reads as a caller would.
std::vector<uint8_t> read_bytes(Rng200& rng, Model& m, size_t bytes) {
    std::vector<uint8_t> out;
    for (int tries = 0; tries < 1000 && out.size() < bytes; ++tries) {
        uint8_t buf[64];
        const size_t n = rng.read(buf, std::min(sizeof buf, bytes - out.size()));
        out.insert(out.end(), buf, buf + n);
        if (n == 0)
            m.delay_us(50);
    }
    return out;
}

TEST(Rng200, WarmsUpThrowsTheFirstWordsAwayAndHandsOutTheRest) {
    Model m;
    Rng200 rng(m);
    ASSERT_TRUE(rng.start());
    EXPECT_EQ(m.taken_before_warmup, 0) << "a word was taken before the warm-up bits were counted";
    EXPECT_EQ(m.taken.size(), kDiscardWords);
    EXPECT_EQ(m.enables, 1);
    const auto got = read_bytes(rng, m, 256);
    ASSERT_EQ(got.size(), 256u);
    // Exactly the device's words after the discarded ones, little-endian, in order.
    ASSERT_GE(m.taken.size(), kDiscardWords + 64);
    for (size_t i = 0; i < 256; ++i)
        ASSERT_EQ(got[i], static_cast<uint8_t>(m.taken[kDiscardWords + i / 4] >> (8 * (i % 4)))) << "byte " << i;
    EXPECT_EQ(rng.stats().words, 64u);
    EXPECT_FALSE(rng.stats().failed);
}

TEST(Rng200, AStuckSourceIsRefusedAndGivenUp) {
    for (auto mode : { Model::Mode::Stuck, Model::Mode::Zeros }) {
        Model m;
        Rng200 rng(m);
        ASSERT_TRUE(rng.start());
        ASSERT_EQ(read_bytes(rng, m, 16).size(), 16u);
        m.set_mode(mode);
        m.delay_us(100); // the FIFO refills with what the source now gives
        uint8_t buf[64];
        size_t total = 0;
        for (int i = 0; i < 20; ++i) {
            total += rng.read(buf, sizeof buf);
            m.delay_us(50);
        }
        // (Words produced before the source got stuck may still pass: at most the FIFO's 32.)
        EXPECT_LE(total, 32u * 4);
        EXPECT_TRUE(rng.stats().failed);
        EXPECT_GE(rng.stats().rejected, kMaxFailures);
        m.set_mode(Model::Mode::Working);
        m.delay_us(100);
        EXPECT_EQ(rng.read(buf, sizeof buf), 0u) << "a source given up stays given up";
    }
}

TEST(Rng200, ADeadDeviceFailsToStartWithinItsBound) {
    Model m(Model::Mode::Dead);
    Rng200 rng(m);
    EXPECT_FALSE(rng.start(50));
    EXPECT_LE(m.now_us, 50'000u + 100);
    EXPECT_TRUE(rng.stats().failed);
    uint8_t buf[16];
    EXPECT_EQ(rng.read(buf, sizeof buf), 0u);
    EXPECT_TRUE(m.taken.empty());
}

TEST(Rng200, AReportedFailureResetsTheDeviceAndTheWarmupIsWaitedOutAgain) {
    Model m;
    Rng200 rng(m);
    ASSERT_TRUE(rng.start());
    ASSERT_EQ(read_bytes(rng, m, 32).size(), 32u);
    const int resets = m.soft_resets;
    m.fail(kIntNistFail);
    uint8_t buf[32];
    EXPECT_EQ(rng.read(buf, sizeof buf), 0u);
    EXPECT_EQ(m.soft_resets, resets + 1);
    EXPECT_EQ(rng.stats().resets, 1u);
    const size_t before = m.taken.size();
    const auto got = read_bytes(rng, m, 32);
    ASSERT_EQ(got.size(), 32u) << "the device came back after its reset";
    EXPECT_EQ(m.taken_before_warmup, 0);
    // After the reset: kDiscardWords thrown away again, then the words handed out.
    for (size_t i = 0; i < 32; ++i)
        ASSERT_EQ(got[i], static_cast<uint8_t>(m.taken[before + kDiscardWords + i / 4] >> (8 * (i % 4))));
    EXPECT_FALSE(rng.stats().failed);
}

TEST(Rng200, ALockoutThatStaysIsGivenUp) {
    Model m;
    Rng200 rng(m);
    ASSERT_TRUE(rng.start());
    uint8_t buf[16];
    for (uint32_t i = 0; i < kMaxFailures; ++i) {
        m.fail(kIntLockout);
        EXPECT_EQ(rng.read(buf, sizeof buf), 0u);
        m.delay_us(10'000);
    }
    EXPECT_TRUE(rng.stats().failed);
    EXPECT_EQ(rng.read(buf, sizeof buf), 0u);
}

} // namespace

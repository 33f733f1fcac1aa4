#pragma once
// The BCM2711's random number generator (`brcm,bcm2711-rng200`, Broadcom's iProc RNG200): a
// hardware entropy source for the kernel's ChaCha20 generator on the Raspberry Pi 4, whose
// Cortex-A72 has no RNDR (issue 38). The generator is reset and started with a warm-up: the
// device counts the bits it has produced, and words are taken only once it has produced
// kWarmupBits and after kDiscardWords more are thrown away. Nothing it says is trusted: a NIST
// self-test failure or a lockout the device reports resets it; the words themselves pass a health
// check (a word repeated, or a run of all-zero or all-one words, is a stuck source: the batch is
// refused and, after kMaxFailures in a row, the device is given up); every poll is bounded.
// Registers go through a Bus, so the driver runs against a model on the host (rng200_test).
#include <cstddef>
#include <cstdint>

namespace rng200 {

class Bus {
public:
    virtual uint32_t read32(uint32_t offset) = 0;
    virtual void write32(uint32_t offset, uint32_t value) = 0;
    virtual void delay_us(uint32_t us) = 0;

protected:
    ~Bus() = default;
};

// Register offsets from the block's base, for the driver and the model.
namespace reg {
constexpr uint32_t kCtrl = 0x00;         // bit 0: the bit generator on; bits 13..20: clock divider
constexpr uint32_t kSoftReset = 0x04;    // write 1: reset the generator's state
constexpr uint32_t kRbgSoftReset = 0x08; // write 1: reset the bit generator
constexpr uint32_t kTotalBits = 0x0c;    // bits produced since the reset
constexpr uint32_t kTotalBitsThreshold = 0x10;
constexpr uint32_t kIntStatus = 0x18; // write 1s to clear
constexpr uint32_t kFifoData = 0x20;
constexpr uint32_t kFifoCount = 0x24; // bits 0..7: words ready; bits 8..15: threshold
} // namespace reg

constexpr uint32_t kCtrlEnable = 1u << 0;
constexpr uint32_t kCtrlDivShift = 13;
constexpr uint32_t kIntNistFail = 1u << 5;
constexpr uint32_t kIntLockout = 1u << 30;
constexpr uint32_t kWarmupBits = 0x40000;
constexpr uint32_t kDiscardWords = 16;
constexpr uint32_t kMaxFailures = 3;

struct Stats {
    uint64_t words;    // handed out
    uint64_t resets;   // after a self-test failure or a lockout the device reported
    uint64_t rejected; // batches refused by the health check
    bool failed;       // given up
};

class Rng200 {
public:
    explicit Rng200(Bus& bus) : m_bus(bus) {}

    // Resets and starts the generator and waits out its warm-up (timeout_ms at most): false when
    // it never produced its warm-up bits or its first words (no such device, or a dead one).
    bool start(uint32_t timeout_ms = 200);
    // Up to len bytes of entropy into out; returns how many (0: none ready within a short poll,
    // the device reset itself, the batch failed the health check, or the device was given up).
    size_t read(uint8_t* out, size_t len);
    const Stats& stats() const { return m_stats; }

private:
    void reset();
    bool wait_words(uint32_t timeout_us, uint32_t& ready);
    // Once the warm-up bits are counted, throws the first words away; true when that is done.
    bool warm(uint32_t timeout_us);

    Bus& m_bus;
    Stats m_stats {};
    uint32_t m_last = 0;
    bool m_have_last = false;
    uint32_t m_failures = 0;
    uint32_t m_to_discard = 0; // words still to throw away after the (last) reset
    bool m_warm = false;       // the warm-up is over and the first words are gone
};

} // namespace rng200

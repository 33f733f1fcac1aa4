#include "rng200.h"

namespace rng200 {
namespace {
constexpr uint32_t kDivider = 3; // the bit generator's clock divider (as the firmware leaves it)
constexpr uint32_t kPollUs = 10;
constexpr uint32_t kMaxBatchWords = 16;
constexpr uint32_t kReadPollUs = 2000; // a read waits this long at most for words
} // namespace

void Rng200::reset() {
    m_bus.write32(reg::kCtrl, m_bus.read32(reg::kCtrl) & ~kCtrlEnable);
    m_bus.write32(reg::kRbgSoftReset, 1);
    m_bus.write32(reg::kSoftReset, 1);
    m_bus.write32(reg::kIntStatus, 0xffffffffu);
    m_bus.write32(reg::kTotalBitsThreshold, kWarmupBits);
    m_bus.write32(reg::kFifoCount, 2u << 8); // words ready above which the device would signal
    m_bus.write32(reg::kCtrl, kCtrlEnable | (kDivider << kCtrlDivShift));
    m_have_last = false;
    m_warm = false;
    m_to_discard = kDiscardWords;
}

bool Rng200::wait_words(uint32_t timeout_us, uint32_t& ready) {
    for (uint32_t waited = 0;; waited += kPollUs) {
        ready = m_bus.read32(reg::kFifoCount) & 0xff;
        if (ready > 0)
            return true;
        if (waited >= timeout_us)
            return false;
        m_bus.delay_us(kPollUs);
    }
}

bool Rng200::warm(uint32_t timeout_us) {
    if (m_warm)
        return true;
    for (uint32_t waited = 0; m_bus.read32(reg::kTotalBits) < kWarmupBits; waited += kPollUs) {
        if (waited >= timeout_us)
            return false;
        m_bus.delay_us(kPollUs);
    }
    while (m_to_discard > 0) {
        uint32_t ready = 0;
        if (!wait_words(timeout_us, ready))
            return false;
        m_last = m_bus.read32(reg::kFifoData);
        m_have_last = true;
        --m_to_discard;
    }
    m_warm = true;
    return true;
}

bool Rng200::start(uint32_t timeout_ms) {
    reset();
    if (!warm(timeout_ms * 1000)) {
        m_stats.failed = true;
        return false;
    }
    return true;
}

size_t Rng200::read(uint8_t* out, size_t len) {
    if (m_stats.failed || len == 0)
        return 0;
    if (m_bus.read32(reg::kIntStatus) & (kIntNistFail | kIntLockout)) {
        ++m_stats.resets;
        if (++m_failures >= kMaxFailures)
            m_stats.failed = true;
        reset(); // and the warm-up again, over the next reads
        return 0;
    }
    if (!warm(kReadPollUs))
        return 0;
    uint32_t ready = 0;
    if (!wait_words(kReadPollUs, ready))
        return 0;
    uint32_t words[kMaxBatchWords];
    uint32_t n = 0;
    const uint32_t want = static_cast<uint32_t>((len + 3) / 4);
    while (n < ready && n < want && n < kMaxBatchWords)
        words[n++] = m_bus.read32(reg::kFifoData);
    // The health check: no word may repeat the one before it, and all-zero or all-one words are
    // not entropy (a 1 in 2^32 chance each for a working source; a stuck one shows at once).
    bool healthy = true;
    for (uint32_t i = 0; i < n; ++i) {
        if ((m_have_last && words[i] == m_last) || words[i] == 0 || words[i] == 0xffffffffu)
            healthy = false;
        m_last = words[i];
        m_have_last = true;
    }
    if (!healthy) {
        ++m_stats.rejected;
        for (auto& w : words)
            *static_cast<volatile uint32_t*>(&w) = 0;
        if (++m_failures >= kMaxFailures)
            m_stats.failed = true;
        return 0;
    }
    m_failures = 0;
    size_t got = 0;
    for (uint32_t i = 0; i < n && got < len; ++i)
        for (int b = 0; b < 4 && got < len; ++b)
            out[got++] = static_cast<uint8_t>(words[i] >> (8 * b));
    m_stats.words += n;
    for (auto& w : words)
        *static_cast<volatile uint32_t*>(&w) = 0;
    return got;
}

} // namespace rng200

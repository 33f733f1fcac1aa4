#pragma once
// A simulated disk for the storage tests: sectors in memory, written sector by sector, that loses
// power at a chosen sector write, leaving the sector being written as it was, half-written or
// garbage; after that nothing more is written until power_on().
#include <storage/block_device.h>

#include <cstring>
#include <vector>

namespace {

constexpr uint32_t kSector = 512;

enum class Tear { None, Half, Garbage };

class SimDisk final : public storage::BlockDevice {
public:
    explicit SimDisk(uint64_t sectors) : m_data(sectors * kSector) {}
    uint32_t sector_size() const override { return kSector; }
    uint64_t sectors() const override { return m_data.size() / kSector; }
    ktl::Result<void> read(uint64_t lba, std::span<std::byte> out) override {
        if (out.size() % kSector || (lba + out.size() / kSector) > sectors())
            return ktl::Error::InvalidArgs;
        std::memcpy(out.data(), m_data.data() + lba * kSector, out.size());
        return {};
    }
    // Sector by sector; once the power is gone nothing more is written.
    ktl::Result<void> write(uint64_t lba, std::span<const std::byte> data) override {
        for (size_t i = 0; i < data.size() / kSector; ++i) {
            if (m_writes == m_crash_at) {
                std::byte* s = m_data.data() + (lba + i) * kSector;
                if (m_tear == Tear::Half)
                    std::memcpy(s, data.data() + i * kSector, kSector / 2);
                else if (m_tear == Tear::Garbage)
                    for (uint32_t b = 0; b < kSector; ++b)
                        s[b] = std::byte(uint8_t(b * 131 + 7));
                m_dead = true;
            }
            if (m_dead)
                return ktl::Error::Unsupported; // the power is gone
            std::memcpy(m_data.data() + (lba + i) * kSector, data.data() + i * kSector, kSector);
            ++m_writes;
        }
        return {};
    }
    ktl::Result<void> flush() override { return m_dead ? ktl::Error::Unsupported : ktl::Result<void>(); }
    void crash_at(uint64_t write, Tear tear) {
        m_crash_at = write;
        m_tear = tear;
    }
    void power_on() {
        m_dead = false;
        m_crash_at = ~0ull;
    }
    uint64_t writes() const { return m_writes; }
    std::vector<std::byte>& bytes() { return m_data; }

private:
    std::vector<std::byte> m_data;
    uint64_t m_writes = 0;
    uint64_t m_crash_at = ~0ull;
    Tear m_tear = Tear::None;
    bool m_dead = false;
};

} // namespace

#pragma once
// The RNG200 driver's bus in the kernel: its registers by MMIO at the block's base, delays by the
// generic timer.
#include "../generic_timer.h"
#include "../mmio.h"
#include "rng200.h"

namespace rng200 {

class MmioBus final : public Bus {
public:
    explicit MmioBus(uintptr_t base) : m_base(base) {}
    uint32_t read32(uint32_t offset) override { return mmio::read32(m_base + offset); }
    void write32(uint32_t offset, uint32_t value) override { mmio::write32(m_base + offset, value); }
    void delay_us(uint32_t us) override {
        const uint64_t until = GenericTimer::now_ns() + uint64_t(us) * 1000;
        while (GenericTimer::now_ns() < until) {}
    }

private:
    uintptr_t m_base;
};

} // namespace rng200

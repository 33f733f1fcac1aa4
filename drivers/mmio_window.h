#pragma once
// A driver's register bus in the kernel: the block's registers by MMIO at its base, busy-wait
// delays by the generic timer. `Bus` is the driver's own interface (read32, write32, delay_us);
// on the host its tests give the driver a model of the device instead.
#include "generic_timer.h"
#include "mmio.h"

template <typename Bus>
class MmioWindow : public Bus {
public:
    explicit MmioWindow(uintptr_t base) : m_base(base) {}
    uint32_t read32(uint32_t offset) override { return mmio::read32(m_base + offset); }
    void write32(uint32_t offset, uint32_t value) override { mmio::write32(m_base + offset, value); }
    void delay_us(uint32_t us) override {
        const uint64_t until = GenericTimer::now_ns() + uint64_t(us) * 1000;
        while (GenericTimer::now_ns() < until) {}
    }

private:
    uintptr_t m_base;
};

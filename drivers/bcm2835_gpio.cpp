#include "bcm2835_gpio.h"

#include "mmio.h"

namespace {
constexpr uintptr_t GPFSEL0 = 0x00;                 // 10 pins per register, 3 bits each
constexpr uintptr_t GPIO_PUP_PDN_CNTRL_REG0 = 0xe4; // BCM2711: 16 pins per register, 2 bits each
} // namespace

bool Bcm2711Gpio::set_function(uint32_t pin, Function f) {
    if (pin >= kPins)
        return false;
    const uintptr_t reg = m_base + GPFSEL0 + 4 * (pin / 10);
    const uint32_t shift = 3 * (pin % 10);
    uint32_t v = mmio::read32(reg);
    v = (v & ~(7u << shift)) | (static_cast<uint32_t>(f) << shift);
    mmio::write32(reg, v);
    return true;
}

Bcm2711Gpio::Function Bcm2711Gpio::function(uint32_t pin) const {
    if (pin >= kPins)
        return Function::Input;
    return static_cast<Function>((mmio::read32(m_base + GPFSEL0 + 4 * (pin / 10)) >> (3 * (pin % 10))) & 7);
}

bool Bcm2711Gpio::set_pull(uint32_t pin, Pull p) {
    if (pin >= kPins)
        return false;
    const uintptr_t reg = m_base + GPIO_PUP_PDN_CNTRL_REG0 + 4 * (pin / 16);
    const uint32_t shift = 2 * (pin % 16);
    uint32_t v = mmio::read32(reg);
    v = (v & ~(3u << shift)) | (static_cast<uint32_t>(p) << shift);
    mmio::write32(reg, v);
    return true;
}

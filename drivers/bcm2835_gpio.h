#pragma once
// The BCM2711's GPIO block (`brcm,bcm2711-gpio`): pin functions and pulls. Used at boot to put
// the Pi 4's PL011 UART0 on the header pins 14/15 (the firmware gives them to the mini UART and
// UART0 to Bluetooth, unless an overlay Debian does not ship says otherwise).
#include <cstdint>

class Bcm2711Gpio {
public:
    enum class Function : uint32_t {
        Input = 0,
        Output = 1,
        Alt0 = 4,
        Alt1 = 5,
        Alt2 = 6,
        Alt3 = 7,
        Alt4 = 3,
        Alt5 = 2
    };
    enum class Pull : uint32_t { None = 0, Up = 1, Down = 2 };
    static constexpr uint32_t kPins = 58;

    explicit Bcm2711Gpio(uintptr_t base) : m_base(base) {}
    bool set_function(uint32_t pin, Function f);
    Function function(uint32_t pin) const;
    bool set_pull(uint32_t pin, Pull p);

private:
    uintptr_t m_base;
};

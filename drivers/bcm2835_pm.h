#pragma once
// The BCM2835/BCM2711 power-management watchdog (`brcm,bcm2835-pm-wdt`, the Pi 4's PM block):
// the Pi has no PSCI, so power-off and reboot go through it. Power-off is a watchdog reset with
// the "halt" partition marked in PM_RSTS, which the firmware reads at the next start and stays
// halted for (QEMU's raspi4b exits); reboot is the same reset with partition 0.
#include <cstdint>

class Bcm2835Pm {
public:
    static void init(uintptr_t base) { s_base = base; }
    static bool available() { return s_base != 0; }
    [[noreturn]] static void power_off();
    [[noreturn]] static void reboot();

private:
    [[noreturn]] static void reset(uint32_t partition);
    static uintptr_t s_base;
};

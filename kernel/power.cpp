#include "power.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/semihosting.h"
#include "console.h"

#include <drivers/bcm2835_pm.h>
#include <drivers/psci.h>
#include <drivers/serial_port.h>

namespace power {

void poweroff(uint32_t status) {
    if (auto* port = console::port())
        port->flush();
    arch::irq_disable();
    if (semihosting::enabled())
        semihosting::exit(status);
    if (!Psci::available() && Bcm2835Pm::available())
        Bcm2835Pm::power_off(); // the Pi 4: no PSCI firmware
    Psci::system_off();
}

void reboot() {
    if (auto* port = console::port())
        port->flush();
    arch::irq_disable();
    if (!Psci::available() && Bcm2835Pm::available())
        Bcm2835Pm::reboot();
    Psci::system_reset();
}

} // namespace power

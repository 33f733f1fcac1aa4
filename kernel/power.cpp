#include "power.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/semihosting.h"
#include "console.h"

#include <drivers/psci.h>
#include <drivers/serial_port.h>

namespace power {

void poweroff(uint32_t status) {
    if (auto* port = console::port())
        port->flush();
    arch::irq_disable();
    if (semihosting::enabled())
        semihosting::exit(status);
    Psci::system_off();
}

void reboot() {
    if (auto* port = console::port())
        port->flush();
    arch::irq_disable();
    Psci::system_reset();
}

} // namespace power

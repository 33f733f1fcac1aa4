#include "panic.h"

#include "arch/aarch64/backtrace.h"
#include "arch/aarch64/cpu.h"
#include "console.h"
#include "current.h"
#include "power.h"

#include <drivers/serial_port.h>
#include <ktl/format.h>

#include <cstdarg>

namespace kpanic {
namespace {
bool g_halt = false;
bool g_in_panic = false;
} // namespace

void set_halt_on_panic(bool halt) { g_halt = halt; }

void enter(const char* what) {
    arch::irq_disable();
    if (g_in_panic) {
        console::printf_polled("\nKERNEL PANIC (nested): %s while reporting a panic\n", what);
        power::poweroff(power::kExitPanic);
    }
    g_in_panic = true;
}

void print_backtrace(uint64_t fp, uint64_t first_pc) {
    uint64_t pcs[32];
    size_t n = arch::backtrace_from(fp, pcs, 32);
    console::printf_polled("backtrace:\n");
    if (first_pc)
        console::printf_polled("  #0  0x%016llx\n", static_cast<unsigned long long>(first_pc));
    for (size_t i = 0; i < n; ++i)
        console::printf_polled("  #%zu  0x%016llx\n", i + (first_pc ? 1 : 0), static_cast<unsigned long long>(pcs[i]));
    console::printf_polled("(symbolise with: aarch64-linux-gnu-addr2line -fipe build/kernel/basalt.elf ADDR...)\n");
}

void finish() {
    if (g_halt) {
        console::printf_polled("halted (panic=halt)\n");
        arch::irq_disable();
        for (;;)
            arch::wfi();
    }
    console::printf_polled("powering off\n");
    power::poweroff(power::kExitPanic);
}

} // namespace kpanic

void panic(const char* fmt, ...) {
    arch::irq_disable();
    if (auto* port = console::port())
        port->flush();
    char reason[256];
    ktl::Formatter f(reason, sizeof reason);
    va_list ap;
    va_start(ap, fmt);
    f.vappend(fmt, ap);
    va_end(ap);
    kpanic::enter(reason);
    console::printf_polled("\nKERNEL PANIC in task '%s': %s\n", current_task_name(), reason);
    kpanic::print_backtrace(reinterpret_cast<uint64_t>(__builtin_frame_address(0)), 0);
    kpanic::finish();
}

#include "board/board.h"

#include <drivers/pl011.h>

void panic_without_console(const char* reason) {
    arch::irq_disable();
    if (auto uart = Pl011::create(board::emergency_pl011(), 0, 0)) {
        console::attach(*uart);
        console::printf_polled("\nKERNEL PANIC before console setup: %s\n", reason);
    }
    power::poweroff(power::kExitPanic);
}

#include "generic_timer.h"

#include <kernel/arch/aarch64/cpu.h>

uint32_t GenericTimer::s_intid = 0;
uint64_t GenericTimer::s_frequency = 0;
uint64_t GenericTimer::s_period_ticks = 0;
uint64_t GenericTimer::s_next_cval = 0;
volatile uint64_t GenericTimer::s_ticks = 0;
GenericTimer::TickCallback GenericTimer::s_callback = nullptr;

namespace {
constexpr uint64_t CTL_ENABLE = 1;
constexpr uint64_t CTL_IMASK = 2;
} // namespace

void GenericTimer::init_counter() { s_frequency = READ_SYSREG(cntfrq_el0) & 0xffffffff; }

void GenericTimer::init(uint32_t intid, uint32_t dt_frequency_hz) {
    s_intid = intid;
    init_counter();
    if (s_frequency == 0)
        s_frequency = dt_frequency_hz;
    if (s_frequency == 0)
        s_frequency = 62500000; // the architecture's most common value; only if both are absent
    WRITE_SYSREG(cntp_ctl_el0, CTL_IMASK);
}

uint64_t GenericTimer::counter() {
    arch::isb(); // keep the read from being speculated ahead of earlier instructions
    return READ_SYSREG(cntpct_el0);
}

uint64_t GenericTimer::ticks_to_ns(uint64_t ticks) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * 1000000000u) / s_frequency);
}

uint64_t GenericTimer::now_ns() { return ticks_to_ns(counter()); }

static uint64_t ns_to_ticks(uint64_t ns, uint64_t freq) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(ns) * freq) / 1000000000u);
}

void GenericTimer::start_periodic(uint64_t period_ns, TickCallback cb) {
    arch::IrqGuard guard;
    s_callback = cb;
    s_period_ticks = ns_to_ticks(period_ns, s_frequency);
    if (s_period_ticks == 0)
        s_period_ticks = 1;
    s_next_cval = counter() + s_period_ticks;
    WRITE_SYSREG(cntp_cval_el0, s_next_cval);
    WRITE_SYSREG(cntp_ctl_el0, CTL_ENABLE);
}

void GenericTimer::set_deadline(uint64_t deadline_ns, TickCallback cb) {
    arch::IrqGuard guard;
    s_callback = cb;
    s_period_ticks = 0;
    WRITE_SYSREG(cntp_cval_el0, ns_to_ticks(deadline_ns, s_frequency));
    WRITE_SYSREG(cntp_ctl_el0, CTL_ENABLE);
}

void GenericTimer::stop() { WRITE_SYSREG(cntp_ctl_el0, CTL_IMASK); }

void GenericTimer::handle_irq(void*) {
    s_ticks = s_ticks + 1;
    if (s_period_ticks != 0) {
        // Advance from the previous deadline, not from "now", so the tick rate does not drift;
        // skip missed periods instead of firing a burst after a long stall.
        uint64_t now = counter();
        s_next_cval += s_period_ticks;
        if (s_next_cval <= now)
            s_next_cval = now + s_period_ticks;
        WRITE_SYSREG(cntp_cval_el0, s_next_cval);
    } else {
        WRITE_SYSREG(cntp_ctl_el0, CTL_IMASK); // one-shot done
    }
    if (s_callback)
        s_callback(ticks_to_ns(counter()));
}

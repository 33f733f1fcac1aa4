#pragma once
// ARM generic timer (ARM DDI 0487 chapter D11), EL1 physical timer. Provides the monotonic
// clock (the system counter) and either a periodic tick or a one-shot deadline interrupt.
#include <cstdint>

class GenericTimer {
public:
    using TickCallback = void (*)(uint64_t now_ns);

    // Counter frequency from CNTFRQ_EL0, or from the device tree's clock-frequency when the
    // firmware left CNTFRQ unset.
    static void init(uint32_t intid, uint32_t dt_frequency_hz);
    // Makes the monotonic clock usable before the device tree names the timer's interrupt.
    static void init_counter();
    static uint32_t intid() { return s_intid; }
    static uint64_t frequency() { return s_frequency; }
    static uint64_t counter();
    static uint64_t now_ns(); // monotonic, from the counter: valid before IRQs
    static uint64_t ticks_to_ns(uint64_t ticks);

    // Periodic interrupt every period_ns; each interrupt increments tick_count() and calls cb.
    static void start_periodic(uint64_t period_ns, TickCallback cb);
    // One-shot: interrupt at the absolute monotonic time deadline_ns (periodic mode stops).
    static void set_deadline(uint64_t deadline_ns, TickCallback cb);
    static void stop();

    static uint64_t tick_count() { return s_ticks; }
    static void handle_irq(void*);

private:
    static uint32_t s_intid;
    static uint64_t s_frequency;
    static uint64_t s_period_ticks;
    static uint64_t s_next_cval;
    static volatile uint64_t s_ticks;
    static TickCallback s_callback;
};

#pragma once
// Timer objects: one-shot or periodic deadlines a task waits on. Expirations are counted, so
// a slow waiter learns how many periods passed instead of losing them. Checked on every
// scheduler tick (resolution: one tick).
#include <cstdint>

#include "sync.h"

namespace ipc {

class Timer {
public:
    ~Timer();
    // delay_ns == 0 disarms. period_ns == 0: one-shot.
    void set(uint64_t now_ns, uint64_t delay_ns, uint64_t period_ns);
    // value = expirations since the last wait (>= 1).
    Outcome wait(uint64_t deadline_ns);
    void shutdown(); // wakes waiters with -BadHandle (object destroyed)

    static void on_tick(uint64_t now_ns);

private:
    void link();
    void unlink();
    void fire(uint64_t now_ns);

    uint64_t m_deadline = 0;
    uint64_t m_period = 0;
    uint64_t m_expirations = 0;
    bool m_armed = false;
    Timer* m_next = nullptr; // armed-timer list
    sched::WaitQueue m_waiters;
};

} // namespace ipc

#include "timer.h"

#include "../sched/scheduler.h"

namespace ipc {
namespace {
Timer* g_armed = nullptr;
constexpr uint32_t kMaxArmed = 4096; // bound for list walks
} // namespace

Timer::~Timer() { unlink(); }

void Timer::link() {
    if (m_armed)
        return;
    m_next = g_armed;
    g_armed = this;
    m_armed = true;
}

void Timer::unlink() {
    if (!m_armed)
        return;
    Timer** p = &g_armed;
    for (uint32_t i = 0; *p && i < kMaxArmed; ++i, p = &(*p)->m_next) {
        if (*p == this) {
            *p = m_next;
            break;
        }
    }
    m_next = nullptr;
    m_armed = false;
}

void Timer::set(uint64_t now_ns, uint64_t delay_ns, uint64_t period_ns) {
    unlink();
    m_expirations = 0;
    if (delay_ns == 0)
        return;
    m_deadline = now_ns + delay_ns;
    m_period = period_ns;
    link();
}

Outcome Timer::wait(uint64_t deadline_ns) {
    if (m_expirations > 0) {
        uint64_t n = m_expirations;
        m_expirations = 0;
        return { false, static_cast<int64_t>(n) };
    }
    sched::block_current(m_waiters, deadline_ns);
    return { true, 0 };
}

void Timer::fire(uint64_t now_ns) {
    if (m_period) {
        uint64_t missed = (now_ns - m_deadline) / m_period;
        m_expirations += 1 + missed;
        m_deadline += (1 + missed) * m_period;
    } else {
        m_expirations += 1;
    }
    if (!m_waiters.empty()) {
        int64_t n = static_cast<int64_t>(m_expirations);
        m_expirations = 0;
        sched::wake_one(m_waiters, n);
    }
}

void Timer::shutdown() {
    unlink();
    sched::wake_all(m_waiters, -static_cast<int64_t>(ktl::Error::BadHandle));
}

void Timer::on_tick(uint64_t now_ns) {
    Timer** p = &g_armed;
    for (uint32_t i = 0; *p && i < kMaxArmed; ++i) {
        Timer* t = *p;
        if (t->m_deadline > now_ns) {
            p = &t->m_next;
            continue;
        }
        t->fire(now_ns);
        if (!t->m_period) { // one-shot: leave the list
            *p = t->m_next;
            t->m_next = nullptr;
            t->m_armed = false;
        } else {
            p = &t->m_next;
        }
    }
}

} // namespace ipc

#include "sync.h"

#include "../arch/aarch64/cpu.h"
#include "../sched/scheduler.h"

namespace ipc {

Outcome Semaphore::wait(uint64_t deadline_ns) {
    if (m_count > 0) {
        --m_count;
        return { false, 0 };
    }
    sched::block_current(m_waiters, deadline_ns);
    return { true, 0 };
}

ktl::Result<void> Semaphore::post() {
    if (sched::wake_one(m_waiters, 0))
        return {};
    if (m_count >= m_max)
        return ktl::Error::Full;
    ++m_count;
    return {};
}

Outcome Mutex::lock(uint64_t deadline_ns) {
    sched::Task* self = sched::current();
    if (!m_owner) {
        m_owner = self;
        return { false, 0 };
    }
    if (m_owner == self)
        return { false, -static_cast<int64_t>(ktl::Error::WouldBlock) }; // would deadlock on itself
    sched::block_current(m_waiters, deadline_ns);
    return { true, 0 };
}

ktl::Result<void> Mutex::unlock() {
    if (m_owner != sched::current())
        return ktl::Error::AccessDenied;
    m_owner = m_waiters.head; // hand over to the longest waiter (or nobody)
    if (m_owner)
        sched::wake_one(m_waiters, 0);
    return {};
}

bool Mutex::owner_ended(const sched::Task* task) {
    if (m_owner != task || !task)
        return false;
    m_owner = m_waiters.head;
    if (m_owner)
        sched::wake_one(m_waiters, kOwnerEnded);
    return true;
}

Outcome Event::wait(uint64_t deadline_ns) {
    if (m_signaled) {
        if (m_auto_reset)
            m_signaled = false;
        return { false, 0 };
    }
    sched::block_current(m_waiters, deadline_ns);
    return { true, 0 };
}

void Event::signal() {
    // Callable from anywhere: an interrupt, a system call, or a task with IRQs on (a tool task
    // waking its bridge). The scheduler's lists are only ever touched with IRQs masked.
    arch::IrqGuard guard;
    if (m_auto_reset) {
        if (!sched::wake_one(m_waiters, 0))
            m_signaled = true;
        return;
    }
    m_signaled = true;
    sched::wake_all(m_waiters, 0);
}

} // namespace ipc

#pragma once
// Blocking synchronisation objects for tasks. Every operation runs in exception context
// (a system call) with IRQs masked (the scheduler panics otherwise), except Event::signal,
// which masks them itself and may be called from any context; "blocks" means the caller is queued and switched out, and
// the system call's result is delivered when it is woken (or times out: -TimedOut).
#include <cstdint>

#include <ktl/result.h>

#include "../sched/scheduler.h"
#include "../sched/task.h"

namespace ipc {

// Result of an operation that may block: done now with a value, or queued.
struct Outcome {
    bool blocked;
    int64_t value; // valid when !blocked
};

class Semaphore {
public:
    Semaphore(int64_t initial, int64_t max) : m_count(initial), m_max(max) {}
    Outcome wait(uint64_t deadline_ns);
    ktl::Result<void> post();
    int64_t count() const { return m_count; }
    void shutdown() { sched::wake_all(m_waiters, -static_cast<int64_t>(ktl::Error::BadHandle)); }

private:
    int64_t m_count;
    int64_t m_max;
    sched::WaitQueue m_waiters;
};

// Non-recursive; ownership passes directly to the first waiter on unlock (FIFO, no barging).
class Mutex {
public:
    Outcome lock(uint64_t deadline_ns);
    ktl::Result<void> unlock();
    const sched::Task* owner() const { return m_owner; }
    void shutdown() { sched::wake_all(m_waiters, -static_cast<int64_t>(ktl::Error::BadHandle)); }
    // The holder ended without unlocking: the longest waiter gets the mutex with the result
    // kOwnerEnded (its data may be half-updated), or the mutex is free. True if it was held.
    bool owner_ended(const sched::Task* task);
    static constexpr int64_t kOwnerEnded = 1;

private:
    sched::Task* m_owner = nullptr;
    sched::WaitQueue m_waiters;
};

class Event {
public:
    explicit Event(bool auto_reset) : m_auto_reset(auto_reset) {}
    Outcome wait(uint64_t deadline_ns);
    void signal(); // safe from any context: masks IRQs itself
    void reset() { m_signaled = false; }
    void shutdown() { sched::wake_all(m_waiters, -static_cast<int64_t>(ktl::Error::BadHandle)); }

private:
    bool m_auto_reset;
    bool m_signaled = false;
    sched::WaitQueue m_waiters;
};

} // namespace ipc

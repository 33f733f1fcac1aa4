#pragma once
// Preemptive priority scheduler: round-robin within a priority, a tick-driven time slice,
// sleeping and blocking with deadlines. All state changes happen with IRQs masked, either in
// exception context (syscalls, interrupts) or during boot.
#include <cstdint>

#include <ktl/result.h>

#include "task.h"

namespace sched {

using TaskFn = int64_t (*)(void* arg);

struct CreateOptions {
    uint8_t priority = kDefaultPriority;
    bool detached = false; // reaped on exit; nobody can join it
};

ktl::Result<Task*> create(const char* name, TaskFn fn, void* arg, CreateOptions options = {});
[[noreturn]] void start(); // leaves the boot context for the highest-priority task

Task* current();
Task* by_id(uint32_t id);
bool started();
// Calls fn for each live task (kernel introspection).
template <typename Fn>
void for_each(Fn&& fn);
Task* task_slot(uint32_t index);

// --- exception-context API (IRQs masked) ---
void on_tick(uint64_t now_ns);
void request_resched();
// Changes a task's priority (1..31), whatever its state; the running task yields at the next
// switch point if a ready task now outranks it.
void set_priority(Task* t, uint8_t priority);
arch::TrapFrame* switch_if_needed(arch::TrapFrame* frame);
void yield_current();
void sleep_current(uint64_t until_ns);
// Blocks the current task on wq until woken or deadline_ns (0 = forever). The wake result
// lands in the task's x0: >= 0 from the waker, or -TimedOut on expiry.
void block_current(WaitQueue& wq, uint64_t deadline_ns);
bool wake_one(WaitQueue& wq, int64_t result);
uint32_t wake_all(WaitQueue& wq, int64_t result);
void exit_current(int64_t code, const char* reason);
// Kills a task that faulted; the rest of the system continues.
void kill_current_fault(const char* reason);
// Kills another task (exception context). A ready or sleeping task dies now (true); a
// blocked one when its wait ends (false), because the object it waits on may still be copying
// into its buffers. Its exit code is -1 and `reason` is logged.
ktl::Result<bool> kill(Task* t, const char* reason);
// Join: returns true and fills code if target is already dead; otherwise blocks the caller.
ktl::Result<bool> join(uint32_t task_id, int64_t& code, uint64_t deadline_ns);
void release(Task* t); // frees a dead, joined task's slot
// The task is released as soon as it ends (at once if it has): nobody will join it. A task killed
// while blocked that outlives its joiner's patience would otherwise stay a zombie.
void detach(Task* t);
// Called for every task as it ends, before anyone can reuse its id, with IRQs masked: gives back
// what it still holds (objects, mutexes, heap; syscall/reclaim.cpp). Set once at boot.
void set_reclaimer(void (*reclaim)(Task* t));
// True once the task has ended (exit, kill or fault), whether or not it was joined.
bool ended(const Task* t);

struct Stats {
    uint32_t tasks;
    uint64_t switches;
    uint64_t ticks;
    uint64_t consistency_checks; // ready-list checks passed (one per tick)
};
Stats stats();

template <typename Fn>
void for_each(Fn&& fn) {
    for (uint32_t i = 0; i < kMaxTasks; ++i) {
        Task* t = task_slot(i);
        if (t && t->state != TaskState::Free)
            fn(*t);
    }
}

} // namespace sched

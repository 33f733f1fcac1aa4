#include "scheduler.h"

#include "../arch/aarch64/cpu.h"
#include "../cap/kcap.h"
#include "../ipc/timer.h"
#include "../clock.h"
#include "../console.h"
#include "../current.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../mm/stack_arena.h"
#include "../panic.h"

#include <cstring>

extern "C" [[noreturn]] void exception_restore(arch::TrapFrame* frame);
extern "C" [[noreturn]] void task_trampoline(sched::TaskFn fn, void* arg);
extern "C" char __exception_stack_top[];

namespace sched {
namespace {

Task g_tasks[kMaxTasks];
WaitQueue g_joiners[kMaxTasks];
Task* g_ready_head[kPriorities] = {};
Task* g_ready_tail[kPriorities] = {};
uint32_t g_ready_mask = 0;
Task* g_current = nullptr;
bool g_need_resched = false;
bool g_started = false;
uint64_t g_switches = 0;
uint64_t g_ticks = 0;
void (*g_reclaim)(Task*) = nullptr;


constexpr uint64_t kSpsrEl1t = 0x4; // EL1 with SP_EL0, DAIF clear: IRQs on

// Every entry point that touches the ready list, a wait queue or a task's state runs with IRQs
// masked: a tick landing in the middle of one would see (and change) a half-linked list. One
// instruction to read DAIF, so it is checked in every build: a caller that forgot to mask is a
// panic naming it, not a scheduler corrupted some time later.
#define SCHED_REQUIRE_MASKED() require_masked(__func__)
void require_masked(const char* where) {
    if (arch::irqs_enabled()) [[unlikely]]
        panic("sched: %s called with IRQs enabled (task '%s')", where, g_current ? g_current->name : "boot");
}

void enqueue(Task* t) {
    t->state = TaskState::Ready;
    t->next_ready = nullptr;
    uint8_t p = t->priority;
    if (g_ready_tail[p])
        g_ready_tail[p]->next_ready = t;
    else
        g_ready_head[p] = t;
    g_ready_tail[p] = t;
    g_ready_mask |= 1u << p;
}

// Takes a Ready task off its list (bounded: a list holds at most kMaxTasks).
void unlink_ready(Task* t) {
    uint8_t p = t->priority;
    Task* prev = nullptr;
    Task* at = g_ready_head[p];
    for (uint32_t guard = 0; at && at != t && guard < kMaxTasks; ++guard) {
        prev = at;
        at = at->next_ready;
    }
    if (at != t)
        return;
    (prev ? prev->next_ready : g_ready_head[p]) = t->next_ready;
    if (g_ready_tail[p] == t)
        g_ready_tail[p] = prev;
    if (!g_ready_head[p])
        g_ready_mask &= ~(1u << p);
    t->next_ready = nullptr;
}

Task* dequeue_highest() {
    if (g_ready_mask == 0)
        return nullptr;
    uint8_t p = static_cast<uint8_t>(31 - __builtin_clz(g_ready_mask));
    Task* t = g_ready_head[p];
    g_ready_head[p] = t->next_ready;
    if (!g_ready_head[p]) {
        g_ready_tail[p] = nullptr;
        g_ready_mask &= ~(1u << p);
    }
    t->next_ready = nullptr;
    return t;
}

void make_ready(Task* t) {
    enqueue(t);
    if (g_current && t->priority > g_current->priority)
        g_need_resched = true;
}

uint32_t index_of(const Task* t) { return static_cast<uint32_t>(t - g_tasks); }

uint64_t g_checks = 0;

// The ready lists agree with the tasks' states: each list is a chain of Ready tasks of its own
// priority, without repeats or cycles, ending at its tail, its mask bit set exactly when it is
// non-empty; every Ready task is on one; the running task is on none. Returns what is wrong, or
// nullptr. Bounded: kPriorities lists of at most kMaxTasks links.
const char* ready_lists_inconsistency() {
    static_assert(kMaxTasks <= 64, "the visited set is one 64-bit word");
    uint64_t seen = 0;
    for (uint32_t p = 0; p < kPriorities; ++p) {
        if (((g_ready_mask >> p) & 1) != (g_ready_head[p] != nullptr))
            return "a priority's mask bit disagrees with its list";
        Task* last = nullptr;
        uint32_t links = 0;
        for (Task* t = g_ready_head[p]; t; t = t->next_ready) {
            if (t < g_tasks || t >= g_tasks + kMaxTasks)
                return "a ready link points outside the task table";
            uint64_t bit = 1ull << index_of(t);
            if (seen & bit)
                return "a task is on the ready lists twice (or a list loops)";
            seen |= bit;
            if (t->state != TaskState::Ready || t->priority != p)
                return "a task on a ready list is not ready at that priority";
            last = t;
            if (++links > kMaxTasks)
                return "a ready list is longer than the task table";
        }
        if (g_ready_tail[p] != last)
            return "a ready list's tail is not its last task";
    }
    for (uint32_t i = 0; i < kMaxTasks; ++i) {
        bool listed = (seen >> i) & 1;
        if ((g_tasks[i].state == TaskState::Ready) != listed)
            return "a ready task is missing from the ready lists";
    }
    if (g_started && (!g_current || g_current->state == TaskState::Ready))
        return "the running task is not running";
    return nullptr;
}

bool remove_ready(Task* t) {
    uint8_t p = t->priority;
    Task* prev = nullptr;
    for (Task* it = g_ready_head[p]; it; prev = it, it = it->next_ready) {
        if (it != t)
            continue;
        if (prev)
            prev->next_ready = it->next_ready;
        else
            g_ready_head[p] = it->next_ready;
        if (g_ready_tail[p] == it)
            g_ready_tail[p] = prev;
        if (!g_ready_head[p])
            g_ready_mask &= ~(1u << p);
        it->next_ready = nullptr;
        return true;
    }
    return false;
}

// The end of a task, whoever ends it. Joiners collect the code now; with nobody waiting the
// task stays a zombie until joined.
void mark_dead(Task* t, int64_t code, const char* reason) {
    t->state = TaskState::Dead;
    t->exit_code = code;
    t->exit_reason = reason;
    t->wake_at_ns = 0;
    t->kill_pending = false;
    stack_arena::free(t->stack_top);
    if (g_reclaim)
        g_reclaim(t); // before any joiner runs: whoever sees it dead sees it empty
    if (wake_all(*t->joiners, code) > 0 || t->reap_on_end)
        t->detached = true;
}

// Ends a task that is not running: it is on no queue any more (ready, sleep or wait).
void end_task(Task* t, int64_t code, const char* reason) {
    KLOG_NOTICE("task '%s' (id %u) killed: %s", t->name, t->id, reason);
    mark_dead(t, code, reason);
    if (t->detached)
        release(t);
}

int64_t idle_main(void*) {
    for (;;)
        arch::wfi();
}

} // namespace

const char* state_name(TaskState s) {
    switch (s) {
    case TaskState::Free: return "free";
    case TaskState::Ready: return "ready";
    case TaskState::Running: return "running";
    case TaskState::Blocked: return "blocked";
    case TaskState::Sleeping: return "sleeping";
    case TaskState::Dead: return "dead";
    }
    return "?";
}

void WaitQueue::push(Task* t) {
    t->next_wait = nullptr;
    if (tail)
        tail->next_wait = t;
    else
        head = t;
    tail = t;
}

Task* WaitQueue::pop() {
    Task* t = head;
    if (t) {
        head = t->next_wait;
        if (!head)
            tail = nullptr;
        t->next_wait = nullptr;
    }
    return t;
}

bool WaitQueue::remove(Task* t) {
    Task* prev = nullptr;
    for (Task* it = head; it; prev = it, it = it->next_wait) {
        if (it != t)
            continue;
        if (prev)
            prev->next_wait = it->next_wait;
        else
            head = it->next_wait;
        if (tail == it)
            tail = prev;
        it->next_wait = nullptr;
        return true;
    }
    return false;
}

Task* task_slot(uint32_t index) { return index < kMaxTasks ? &g_tasks[index] : nullptr; }
Task* current() { return g_current; }
bool started() { return g_started; }

Task* by_id(uint32_t id) {
    if (id == 0 || id > kMaxTasks)
        return nullptr;
    Task* t = &g_tasks[id - 1];
    return t->state == TaskState::Free ? nullptr : t;
}

ktl::Result<Task*> create(const char* name, TaskFn fn, void* arg, CreateOptions options) {
    if (!fn || options.priority >= kPriorities)
        return ktl::Error::InvalidArgs;
    arch::IrqGuard guard;
    Task* t = nullptr;
    for (auto& slot : g_tasks) {
        if (slot.state == TaskState::Free) {
            t = &slot;
            break;
        }
    }
    if (!t)
        return ktl::Error::Full;
    auto stack = TRY(stack_arena::alloc());
    uint32_t generation = t->generation + 1;
    *t = Task {};
    t->generation = generation;
    t->id = index_of(t) + 1;
    size_t n = 0;
    for (; name && name[n] && n < kNameMax; ++n)
        t->name[n] = name[n];
    t->name[n] = '\0';
    t->priority = options.priority;
    t->detached = options.detached;
    t->stack_top = stack.top;
    t->stack_bottom = stack.bottom;
    t->frame.elr = reinterpret_cast<uint64_t>(task_trampoline);
    t->frame.spsr = kSpsrEl1t;
    t->frame.sp_el0 = stack.top;
    t->frame.x[0] = reinterpret_cast<uint64_t>(fn);
    t->frame.x[1] = reinterpret_cast<uint64_t>(arg);
    t->joiners = &g_joiners[index_of(t)];
    *t->joiners = WaitQueue {};
    kheap::set_limit(static_cast<uint16_t>(t->id), 0); // a reused id does not inherit a heap cap
    if (auto r = kcap::attach_task(t); !r) {
        stack_arena::free(stack.top);
        t->state = TaskState::Free;
        return r.error();
    }
    make_ready(t);
    return t;
}

void start() {
    arch::irq_disable();
    auto idle = create("idle", idle_main, nullptr, CreateOptions { 0, true });
    if (!idle)
        panic("sched: cannot create the idle task");
    Task* first = dequeue_highest();
    first->state = TaskState::Running;
    first->switched_in_ns = clock::monotonic_ns();
    g_current = first;
    g_started = true;
    set_current_task_name(first->name);
    // SP_EL1 from now on: every exception builds its frame at the top of the exception stack
    // (boot/kernel.ld.in: guarded, and checked by the vectors).
    auto* frame = reinterpret_cast<arch::TrapFrame*>(reinterpret_cast<uintptr_t>(__exception_stack_top) -
                                                     sizeof(arch::TrapFrame));
    *frame = first->frame;
    exception_restore(frame);
}

void request_resched() { g_need_resched = true; }

void set_priority(Task* t, uint8_t priority) {
    SCHED_REQUIRE_MASKED();
    if (priority == 0 || priority >= kPriorities || t->priority == priority)
        return;
    if (t->state == TaskState::Ready) {
        unlink_ready(t);
        t->priority = priority;
        make_ready(t);
        return;
    }
    t->priority = priority;
    if (t == g_current)
        g_need_resched = true; // a task it outranked may now come first
}

void on_tick(uint64_t now_ns) {
    SCHED_REQUIRE_MASKED();
    ++g_ticks;
    if (!g_started)
        return;
    // Every tick, in every build: a corrupted ready list is caught at the next tick, named, rather
    // than showing later as a lost or doubled task (a few hundred loads; ticks are 1-10 ms).
    if (const char* wrong = ready_lists_inconsistency()) [[unlikely]]
        panic("sched: ready lists corrupted: %s", wrong);
    ++g_checks;
    ipc::Timer::on_tick(now_ns);
    for (auto& t : g_tasks) {
        if (t.wake_at_ns == 0 || t.wake_at_ns > now_ns)
            continue;
        if (t.state == TaskState::Sleeping) {
            t.wake_at_ns = 0;
            t.frame.x[0] = 0;
            make_ready(&t);
        } else if (t.state == TaskState::Blocked) {
            if (t.waiting_on)
                t.waiting_on->remove(&t);
            t.waiting_on = nullptr;
            t.wake_at_ns = 0;
            t.frame.x[0] = static_cast<uint64_t>(-static_cast<int64_t>(ktl::Error::TimedOut));
            make_ready(&t);
        }
    }
    // Time slice of one tick: rotate among equal-priority ready tasks.
    if (g_current && (g_ready_mask >> g_current->priority) != 0)
        g_need_resched = true;
}

arch::TrapFrame* switch_if_needed(arch::TrapFrame* frame) {
    SCHED_REQUIRE_MASKED();
    if (!g_started || !g_need_resched)
        return frame;
    g_need_resched = false;
    Task* prev = g_current;
    // Saved first: reaping a killed task below may wake prev (a joiner) and set its result.
    if (prev->state != TaskState::Dead)
        prev->frame = *frame;
    if (prev->state == TaskState::Running)
        enqueue(prev);
    Task* next = dequeue_highest();
    // Tasks killed while blocked die here, when their wait has ended.
    for (uint32_t guard = 0; next && next->kill_pending && guard < kMaxTasks; ++guard) {
        end_task(next, -1, next->kill_reason);
        next = dequeue_highest();
    }
    if (!next)
        panic("sched: nothing to run (the idle task is gone)");
    uint64_t now = clock::monotonic_ns();
    if (next == prev) {
        prev->state = TaskState::Running;
        *frame = prev->frame;
        return frame;
    }
    prev->cpu_ns += now - prev->switched_in_ns;
    if (prev->state == TaskState::Dead && prev->detached)
        release(prev);
    *frame = next->frame;
    next->state = TaskState::Running;
    next->switched_in_ns = now;
    ++next->switches;
    ++g_switches;
    g_current = next;
    set_current_task_name(next->name);
    return frame;
}

void yield_current() {
    SCHED_REQUIRE_MASKED();
    g_need_resched = true;
}

void sleep_current(uint64_t until_ns) {
    SCHED_REQUIRE_MASKED();
    g_current->state = TaskState::Sleeping;
    g_current->wake_at_ns = until_ns ? until_ns : 1;
    g_need_resched = true;
}

void block_current(WaitQueue& wq, uint64_t deadline_ns) {
    SCHED_REQUIRE_MASKED();
    Task* t = g_current;
    t->state = TaskState::Blocked;
    t->waiting_on = &wq;
    t->wake_at_ns = deadline_ns;
    wq.push(t);
    g_need_resched = true;
}

bool wake_one(WaitQueue& wq, int64_t result) {
    SCHED_REQUIRE_MASKED();
    Task* t = wq.pop();
    if (!t)
        return false;
    t->waiting_on = nullptr;
    t->wake_at_ns = 0;
    t->frame.x[0] = static_cast<uint64_t>(result);
    make_ready(t);
    return true;
}

uint32_t wake_all(WaitQueue& wq, int64_t result) {
    uint32_t n = 0;
    while (n < kMaxTasks && wake_one(wq, result))
        ++n;
    return n;
}

void exit_current(int64_t code, const char* reason) {
    SCHED_REQUIRE_MASKED();
    mark_dead(g_current, code, reason);
    g_need_resched = true;
}

void kill_current_fault(const char* reason) {
    Task* t = g_current;
    KLOG_ERROR("task '%s' (id %u) killed: %s", t->name, t->id, reason);
    exit_current(-1, reason);
}

ktl::Result<bool> kill(Task* t, const char* reason) {
    SCHED_REQUIRE_MASKED();
    if (!t || t->state == TaskState::Free)
        return ktl::Error::NotFound;
    if (t == g_current || t->detached)
        return ktl::Error::InvalidArgs; // a task ends itself with exit; the idle task never ends
    switch (t->state) {
    case TaskState::Dead: return true;
    case TaskState::Ready:
        remove_ready(t);
        end_task(t, -1, reason);
        return true;
    case TaskState::Sleeping: end_task(t, -1, reason); return true;
    default: // Blocked
        t->kill_pending = true;
        t->kill_reason = reason;
        return false;
    }
}

ktl::Result<bool> join(uint32_t task_id, int64_t& code, uint64_t deadline_ns) {
    SCHED_REQUIRE_MASKED();
    Task* t = by_id(task_id);
    if (!t)
        return ktl::Error::NotFound;
    if (t == g_current || t->detached)
        return ktl::Error::InvalidArgs;
    if (t->state == TaskState::Dead) {
        code = t->exit_code;
        release(t);
        return true;
    }
    block_current(*t->joiners, deadline_ns);
    return false;
}

void set_reclaimer(void (*reclaim)(Task* t)) { g_reclaim = reclaim; }

bool ended(const Task* t) { return !t || t->state == TaskState::Dead || t->state == TaskState::Free; }

void detach(Task* t) {
    SCHED_REQUIRE_MASKED();
    if (!t || t->state == TaskState::Free)
        return;
    if (t->state == TaskState::Dead) {
        if (t != g_current)
            release(t);
        return;
    }
    t->reap_on_end = true;
}

void release(Task* t) {
    SCHED_REQUIRE_MASKED();
    kcap::detach_task(t); // its capabilities, and everything derived from them, go too
    // The Task object that named it dies too: capabilities to it fail from now on, and the
    // object registry gets its slot back (a long-running appliance creates a task per call).
    if (t->cap_object)
        (void)kcap::destroy_object(t->cap_object);
    t->cap_object = 0;
    t->state = TaskState::Free;
}

Stats stats() {
    Stats s { 0, g_switches, g_ticks, g_checks };
    for (auto& t : g_tasks)
        s.tasks += t.state != TaskState::Free ? 1 : 0;
    return s;
}

} // namespace sched

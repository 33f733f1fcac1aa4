// Death reclaims everything: a task that takes heap, creates objects, holds a mutex someone waits
// for and then faults leaves the heap, the physical pages and the object registry as they were,
// and the waiter gets the mutex, told that its holder ended. A task killed while blocked whose
// joiner gives up is detached and released when it does end: no zombie.
#include "../cap/kcap.h"
#include "../fault_injection.h"
#include "../ipc/sync.h"
#include "../mm/kheap.h"
#include "../sched/scheduler.h"
#include "cases.h"

namespace ktest {
namespace {

struct Hoard {
    uint32_t factory = 0; // slot in the hoarder's table
    uint32_t mutex = 0;   // slot in the hoarder's table
    uint32_t waiter_mutex = 0;
    volatile uint32_t id = 0; // the hoarder's task id
    volatile bool holding = false;
    volatile int64_t waiter_result = -99;
    uint32_t blocker_event = 0;
} g_hoard;

int64_t hoarder(void*) {
    g_hoard.id = static_cast<uint32_t>(sys::self());
    for (int i = 0; i < 100; ++i)
        (void)kheap::alloc(300);
    (void)kheap::alloc(100 * 1024);
    (void)sys::event_create(g_hoard.factory, 0);
    (void)sys::region_create(g_hoard.factory, 64 * 1024, 0, 0);
    (void)sys::queue_create(g_hoard.factory, 64, 16);
    if (sys::mutex_lock(g_hoard.mutex, 0) != 0)
        return -2;
    g_hoard.holding = true;
    sys::sleep_ns(20 * kMs); // the waiter blocks on the mutex meanwhile
    fault_injection::trigger("data");
    return -3; // not reached
}

int64_t mutex_waiter(void*) {
    g_hoard.waiter_result = sys::mutex_lock(g_hoard.waiter_mutex, 0);
    if (g_hoard.waiter_result >= 0)
        sys::mutex_unlock(g_hoard.waiter_mutex);
    return 0;
}

int64_t blocker(void*) {
    sys::event_wait(g_hoard.blocker_event, 0);
    return 0;
}

uint64_t live_objects() { return kcap::stats().live_objects; }

} // namespace

bool task_reclaim(const Caps& caps) {
    int64_t mutex = sys::mutex_create(caps.factory);
    KT_CHECK(mutex >= 0, "mutex_create");
    const auto heap0 = kheap::stats();
    const uint64_t objects0 = live_objects();
    const uint64_t tasks0 = sched::stats().tasks;

    int64_t hoard = spawn(caps, "hoarder", hoarder, nullptr, 10);
    int64_t waiter = spawn(caps, "mutex-waiter", mutex_waiter, nullptr, 9);
    KT_CHECK(hoard >= 0 && waiter >= 0, "spawn");
    int64_t f = share(caps.factory, static_cast<uint32_t>(hoard), kcap::kWrite);
    int64_t m = share(static_cast<uint32_t>(mutex), static_cast<uint32_t>(hoard), kcap::kWrite);
    int64_t wm = share(static_cast<uint32_t>(mutex), static_cast<uint32_t>(waiter), kcap::kWrite);
    KT_CHECK(f >= 0 && m >= 0 && wm >= 0, "share");
    g_hoard.factory = static_cast<uint32_t>(f);
    g_hoard.mutex = static_cast<uint32_t>(m);
    g_hoard.waiter_mutex = static_cast<uint32_t>(wm);
    int64_t code = join(static_cast<uint32_t>(hoard), 2000 * kMs);
    KT_CHECK(code == -1, "the hoarder faulted (exit code %lld)", static_cast<long long>(code));
    KT_CHECK(g_hoard.holding, "the hoarder held the mutex when it faulted");
    KT_CHECK(join(static_cast<uint32_t>(waiter), 1000 * kMs) == 0, "the waiter got past the mutex");
    KT_CHECK(g_hoard.waiter_result == ipc::Mutex::kOwnerEnded, "the waiter was told its holder ended (%lld)",
             static_cast<long long>(g_hoard.waiter_result));
    KT_CHECK(kheap::used_by(static_cast<uint16_t>(g_hoard.id)) == 0, "the hoarder's id is still charged %llu bytes",
             static_cast<unsigned long long>(kheap::used_by(static_cast<uint16_t>(g_hoard.id))));
    const auto heap1 = kheap::stats();
    KT_CHECK(heap1.live_allocations == heap0.live_allocations && heap1.bytes_requested == heap0.bytes_requested,
             "heap %llu allocations / %llu bytes, was %llu / %llu",
             static_cast<unsigned long long>(heap1.live_allocations),
             static_cast<unsigned long long>(heap1.bytes_requested),
             static_cast<unsigned long long>(heap0.live_allocations),
             static_cast<unsigned long long>(heap0.bytes_requested));
    KT_CHECK(live_objects() == objects0, "%llu live objects, was %llu", static_cast<unsigned long long>(live_objects()),
             static_cast<unsigned long long>(objects0));
    // The mutex is free again and works.
    KT_CHECK(sys::mutex_lock(mutex, 10 * kMs) == 0, "lock after the holder ended");
    KT_CHECK(sys::mutex_unlock(mutex) == 0, "unlock");

    // No zombie: killed while blocked, given up on, detached, released when its wait ends.
    int64_t ev = sys::event_create(caps.factory, 0);
    int64_t blocked = spawn(caps, "blocked", blocker, nullptr, 10);
    KT_CHECK(ev >= 0 && blocked >= 0, "spawn blocker");
    int64_t bev = share(static_cast<uint32_t>(ev), static_cast<uint32_t>(blocked), kcap::kRead);
    KT_CHECK(bev >= 0, "share the event");
    g_hoard.blocker_event = static_cast<uint32_t>(bev);
    sys::sleep_ns(20 * kMs);
    KT_CHECK(sys::task_kill(blocked) == 0, "a blocked task dies later");
    KT_CHECK(join(static_cast<uint32_t>(blocked), 10 * kMs) == -int64_t(ktl::Error::TimedOut), "still blocked");
    KT_CHECK(sys::task_status(blocked) == 0, "not ended yet");
    KT_CHECK(sys::task_detach(blocked) == 0, "detach");
    sys::cap_delete(blocked);
    KT_CHECK(sys::event_signal(ev) == 0, "signal");
    sys::sleep_ns(20 * kMs);
    sys::object_destroy(ev);
    sys::object_destroy(mutex);
    KT_CHECK(sched::stats().tasks == tasks0, "%u tasks, was %llu: a zombie is left", sched::stats().tasks,
             static_cast<unsigned long long>(tasks0));
    console::printf("ktest:   a faulting task's heap (101 blocks), 3 objects and held mutex reclaimed; "
                    "a killed blocked task detached and released\n");
    return true;
}

} // namespace ktest

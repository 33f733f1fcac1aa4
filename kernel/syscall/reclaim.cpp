// What an ended task gives back. A tool task that faults or is killed never runs its own
// clean-up, so the kernel does it: the objects it created die with it (whoever else held a
// capability sees -BadHandle, waiters wake), a mutex it held passes to the next waiter, and
// every heap block still charged to it is freed, so its id starts clean when the slot is reused.
#include "../ipc/sync.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../mm/pmm.h"
#include "../sched/scheduler.h"
#include "handlers.h"

namespace handlers {
namespace {

Reclaimed g_total;

struct MutexSweep {
    const sched::Task* task;
    uint64_t handed_on;
};

} // namespace

Reclaimed reclaim_task(sched::Task* task) {
    Reclaimed r;
    if (!task || task->id == 0)
        return r;
    r.objects = kcap::destroy_owned(task->id, destroy_by_type);
    MutexSweep sweep { task, 0 };
    kcap::for_each_object(
        kcap::ObjectType::Mutex,
        [](void* object, void* arg) {
        auto* s = static_cast<MutexSweep*>(arg);
        s->handed_on += static_cast<ipc::Mutex*>(object)->owner_ended(s->task) ? 1 : 0;
        },
        &sweep);
    r.mutexes = sweep.handed_on;
    auto heap = kheap::release_task(task->id);
    r.heap_allocations = heap.allocations;
    r.heap_bytes = heap.bytes;
    r.pages = pmm::pages_owned_by(static_cast<uint16_t>(task->id));
    if (r.pages != 0)
        KLOG_ERROR("task '%s' (id %u) ended holding %llu physical pages outside any object: leaked", task->name,
                   task->id, static_cast<unsigned long long>(r.pages));
    if (r.objects || r.mutexes || r.heap_allocations)
        KLOG_DEBUG(
            "task '%s' (id %u) ended holding %llu objects, %llu mutexes, %llu heap blocks (%llu bytes): reclaimed",
            task->name, task->id, static_cast<unsigned long long>(r.objects),
            static_cast<unsigned long long>(r.mutexes), static_cast<unsigned long long>(r.heap_allocations),
            static_cast<unsigned long long>(r.heap_bytes));
    g_total.objects += r.objects;
    g_total.mutexes += r.mutexes;
    g_total.heap_allocations += r.heap_allocations;
    g_total.heap_bytes += r.heap_bytes;
    g_total.pages += r.pages;
    return r;
}

Reclaimed reclaimed_total() { return g_total; }

} // namespace handlers

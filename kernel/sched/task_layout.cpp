// Where a Task's fields lie, for qemu/task_dump.py: it reads this table out of a hung guest's
// memory dump (QEMU's dump-guest-memory) to list every task's state, what it waits on and its
// call stack, with no offsets of its own to fall out of step with task.h.
#include <cstddef>
#include <cstdint>

#include "task.h"

namespace {
constexpr uint64_t kLayoutMagic = 0x7461736b6c61796full; // "tasklayo": the table's own check
} // namespace

extern "C" [[gnu::used, gnu::retain]] const uint64_t basalt_task_layout[] = {
    kLayoutMagic,
    sizeof(sched::Task),
    sched::kMaxTasks,
    offsetof(sched::Task, id),
    offsetof(sched::Task, name),
    offsetof(sched::Task, state),
    offsetof(sched::Task, priority),
    offsetof(sched::Task, frame),
    offsetof(sched::Task, wake_at_ns),
    offsetof(sched::Task, switches),
    offsetof(sched::Task, waiting_on),
    offsetof(sched::Task, cpu_ns),
};

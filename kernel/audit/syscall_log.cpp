#include "syscall_log.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../sched/scheduler.h"

namespace audit {
namespace {
constexpr uint64_t kSlots = 256;
Record g_ring[kSlots];
uint64_t g_next = 0;
} // namespace

void record(uint32_t syscall, uint32_t slot, uint32_t object_type, uint32_t rights, Outcome outcome, int32_t error) {
    arch::IrqGuard guard;
    Record& r = g_ring[g_next % kSlots];
    r = Record {};
    r.seq = g_next++;
    r.mono_ns = clock::monotonic_ns();
    const sched::Task* t = sched::current();
    r.task_id = t ? t->id : 0;
    for (size_t i = 0; t && i + 1 < sizeof r.task_name && t->name[i]; ++i)
        r.task_name[i] = t->name[i];
    r.syscall = syscall;
    r.slot = slot;
    r.object_type = object_type;
    r.rights = rights;
    r.outcome = outcome;
    r.error = error;
}

bool read(uint64_t seq, Record& out) {
    arch::IrqGuard guard;
    if (seq >= g_next || g_next - seq > kSlots)
        return false;
    out = g_ring[seq % kSlots];
    return true;
}

uint64_t oldest_seq() {
    arch::IrqGuard guard;
    return g_next > kSlots ? g_next - kSlots : 0;
}

uint64_t next_seq() {
    arch::IrqGuard guard;
    return g_next;
}

} // namespace audit

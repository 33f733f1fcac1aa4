// Kernel introspection system calls: each needs an Introspection (or AuditLog) capability.
#include "../audit/syscall_log.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../mm/pmm.h"
#include "../mm/stack_arena.h"
#include "../sched/scheduler.h"
#include "buffers.h"
#include "handlers.h"

#include <cstring>

namespace handlers {
namespace {
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
} // namespace

int64_t task_list(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t max = f.x[2];
    if (max > sched::kMaxTasks || (max && !buffers::writable(f.x[1], max * sizeof(sysinfo::TaskInfo))))
        return err(ktl::Error::InvalidArgs);
    auto* out = reinterpret_cast<sysinfo::TaskInfo*>(f.x[1]);
    uint64_t n = 0;
    sched::for_each([&](const sched::Task& t) {
        if (n >= max)
            return;
        sysinfo::TaskInfo info {};
        info.id = t.id;
        info.state = static_cast<uint8_t>(t.state);
        info.priority = t.priority;
        info.cpu_ns = t.cpu_ns;
        info.switches = t.switches;
        info.heap_bytes = kheap::used_by(static_cast<uint16_t>(t.id));
        info.stack_bytes = t.stack_top - t.stack_bottom;
        memcpy(info.name, t.name, sizeof info.name - 1);
        out[n++] = info;
    });
    return static_cast<int64_t>(n);
}

int64_t mem_stats(arch::TrapFrame& f, const kcap::Resolved&) {
    if (!buffers::writable(f.x[1], sizeof(sysinfo::MemInfo)))
        return err(ktl::Error::InvalidArgs);
    auto p = pmm::stats();
    auto h = kheap::stats();
    sysinfo::MemInfo m {};
    m.total_pages = p.total_pages;
    m.free_pages = p.free_pages;
    m.used_pages = p.used_pages;
    m.largest_free_block = p.largest_free_block;
    m.heap_live_allocations = h.live_allocations;
    m.heap_bytes_requested = h.bytes_requested;
    m.heap_slab_pages = h.slab_pages;
    m.heap_large_pages = h.large_pages;
    m.stacks_used = stack_arena::slots_used();
    m.stacks_total = stack_arena::slots_total();
    auto r = reclaimed_total();
    m.reclaimed_heap_allocations = r.heap_allocations;
    m.reclaimed_heap_bytes = r.heap_bytes;
    m.reclaimed_objects = r.objects;
    m.reclaimed_mutexes = r.mutexes;
    *reinterpret_cast<sysinfo::MemInfo*>(f.x[1]) = m;
    return 0;
}

int64_t sched_stats(arch::TrapFrame& f, const kcap::Resolved&) {
    if (!buffers::writable(f.x[1], sizeof(sysinfo::SchedInfo)))
        return err(ktl::Error::InvalidArgs);
    auto s = sched::stats();
    *reinterpret_cast<sysinfo::SchedInfo*>(f.x[1]) = { s.ticks, s.switches, s.tasks, s.consistency_checks };
    return 0;
}

int64_t cap_list(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t max = f.x[2];
    if (max > 1024 || (max && !buffers::writable(f.x[1], max * sizeof(kcap::CapInfo))))
        return err(ktl::Error::InvalidArgs);
    return kcap::list(sched::current(), reinterpret_cast<kcap::CapInfo*>(f.x[1]), static_cast<uint32_t>(max));
}

int64_t log_read(arch::TrapFrame& f, const kcap::Resolved&) {
    if (!buffers::writable(f.x[2], sizeof(ktl::LogRecord)))
        return err(ktl::Error::InvalidArgs);
    uint64_t seq = f.x[1];
    if (seq < klog::oldest_seq())
        seq = klog::oldest_seq();
    if (!klog::read(seq, *reinterpret_cast<ktl::LogRecord*>(f.x[2])))
        return err(ktl::Error::NotFound);
    return static_cast<int64_t>(seq + 1);
}

int64_t audit_read(arch::TrapFrame& f, const kcap::Resolved&) {
    if (!buffers::writable(f.x[2], sizeof(audit::Record)))
        return err(ktl::Error::InvalidArgs);
    uint64_t seq = f.x[1];
    if (seq < audit::oldest_seq())
        seq = audit::oldest_seq(); // like log_read: resume at the oldest record still held
    if (!audit::read(seq, *reinterpret_cast<audit::Record*>(f.x[2])))
        return err(ktl::Error::NotFound);
    return static_cast<int64_t>(seq + 1);
}

} // namespace handlers

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

int64_t task_list(const kcap::Resolved&, Cap, sysinfo::TaskInfo* out, uint64_t max) {
    if (max > sched::kMaxTasks || (max && !buffers::writable(out, max * sizeof(sysinfo::TaskInfo))))
        return err(ktl::Error::InvalidArgs);
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

int64_t mem_stats(const kcap::Resolved&, Cap, sysinfo::MemInfo* out) {
    if (!buffers::writable(out, sizeof(sysinfo::MemInfo)))
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
    *out = m;
    return 0;
}

int64_t sched_stats(const kcap::Resolved&, Cap, sysinfo::SchedInfo* out) {
    if (!buffers::writable(out, sizeof(sysinfo::SchedInfo)))
        return err(ktl::Error::InvalidArgs);
    auto s = sched::stats();
    *out = { s.ticks, s.switches, s.tasks, s.consistency_checks };
    return 0;
}

int64_t cap_list(const kcap::Resolved&, Cap, kcap::CapInfo* out, uint64_t max) {
    if (max > 1024 || (max && !buffers::writable(out, max * sizeof(kcap::CapInfo))))
        return err(ktl::Error::InvalidArgs);
    return kcap::list(sched::current(), out, static_cast<uint32_t>(max));
}

int64_t log_read(const kcap::Resolved&, Cap, uint64_t seq, ktl::LogRecord* out) {
    if (!buffers::writable(out, sizeof(ktl::LogRecord)))
        return err(ktl::Error::InvalidArgs);
    if (seq < klog::oldest_seq())
        seq = klog::oldest_seq();
    if (!klog::read(seq, *out))
        return err(ktl::Error::NotFound);
    return static_cast<int64_t>(seq + 1);
}

int64_t audit_read(const kcap::Resolved&, Cap, uint64_t seq, audit::Record* out) {
    if (!buffers::writable(out, sizeof(audit::Record)))
        return err(ktl::Error::InvalidArgs);
    if (seq < audit::oldest_seq())
        seq = audit::oldest_seq(); // like log_read: resume at the oldest record still held
    if (!audit::read(seq, *out))
        return err(ktl::Error::NotFound);
    return static_cast<int64_t>(seq + 1);
}

} // namespace handlers

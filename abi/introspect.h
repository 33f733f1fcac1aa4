#pragma once
// Records of the introspection calls (task_list, mem_stats, sched_stats, cap_list, log_read,
// audit_read).
#include <cstdint>

#include <ktl/log_ring.h>

namespace abi {

struct TaskInfo {
    uint32_t id;
    uint8_t state;
    uint8_t priority;
    uint16_t reserved;
    uint64_t cpu_ns;
    uint64_t switches;
    uint64_t heap_bytes;
    uint64_t stack_bytes;
    char name[24];
};

struct MemInfo {
    uint64_t total_pages;
    uint64_t free_pages;
    uint64_t used_pages;
    uint64_t largest_free_block;
    uint64_t heap_live_allocations;
    uint64_t heap_bytes_requested;
    uint64_t heap_slab_pages;
    uint64_t heap_large_pages;
    uint64_t stacks_used;
    uint64_t stacks_total;
    // Taken back from tasks that ended holding them (since boot).
    uint64_t reclaimed_heap_allocations;
    uint64_t reclaimed_heap_bytes;
    uint64_t reclaimed_objects;
    uint64_t reclaimed_mutexes;
};

struct SchedInfo {
    uint64_t ticks;
    uint64_t switches;
    uint64_t tasks;
    uint64_t consistency_checks; // ready-list checks passed, one per tick (a failed one panics)
};

struct CapInfo {
    uint32_t slot;
    uint32_t type;
    uint32_t rights;
    uint64_t object_id;
    uint64_t badge;
};

// One kernel log record (the ring's own layout, lib/ktl/log_ring.h).
using LogRecord = ktl::LogRecord;

enum class AuditOutcome : uint8_t { Allow = 0, Deny = 1, Error = 2 };

struct AuditRecord {
    uint64_t seq;
    uint64_t mono_ns;
    uint32_t task_id;
    uint32_t syscall;     // number from abi/syscalls.def
    uint32_t slot;        // capability slot presented
    uint32_t object_type; // cap::ObjectType expected
    uint32_t rights;      // rights wanted
    int32_t error;        // ktl::Error, 0 when allowed
    AuditOutcome outcome;
    char task_name[24];
};

} // namespace abi

#pragma once
// System call handlers, one per abi/syscalls.def entry. Each receives the already-checked
// capability object and the call's arguments, typed by its list (decode.h fetched them from the
// frame); returns the result for x0, or kBlocked when the caller was queued (the waker delivers
// the result).
#include <climits>
#include <cstdint>

#include "../arch/aarch64/trap_frame.h"
#include "../cap/kcap.h"
#include "decode.h"

namespace ipc {
struct Outcome;
}

namespace handlers {

constexpr int64_t kBlocked = INT64_MIN;

// A wait's timeout argument (0: forever) as the absolute deadline the wait primitives take, and
// a wait's outcome as the call's result (kBlocked while the caller is queued).
uint64_t deadline_after(uint64_t timeout_ns);
int64_t finish(ipc::Outcome o);

using abi::Cap;

// Declared with the decoded arguments of the call's list: a definition that differs does not link.
#define SYSCALL(nr, name, type, rights, args, doc) decode::Handler<abi::signature::name> name;
#include <abi/syscalls.def>
#undef SYSCALL

// A region object as region_create makes it (policy 0 immutable, 1 append-only, 2 slab), also for
// kernel singletons that several tasks share (the MCP audit trail; register it as a Region).
// Its pages and object are charged to the calling task, or to the kernel when kernel_owned.
ktl::Result<void*> make_region(uint64_t size, uint64_t policy, uint64_t object_size, bool kernel_owned);
// Frees a region object created by region_create (its pages and bookkeeping).
void destroy_region(void* object);
// Frees a vector collection (its index pages and bookkeeping); nothing may be queued on it.
void destroy_collection(void* object);
// Frees an object whose capabilities are already dead (object_destroy, or its owner's end).
void destroy_by_type(kcap::ObjectType type, void* object);

struct Reclaimed {
    uint64_t objects = 0;          // IPC objects and regions the task created
    uint64_t mutexes = 0;          // mutexes it held, handed on
    uint64_t heap_allocations = 0; // what was still charged to it
    uint64_t heap_bytes = 0;
    uint64_t pages = 0; // physical pages still charged to it afterwards (a leak: logged)
};
// Everything an ended task still held: its objects, its mutexes, its heap. Called by the
// scheduler as the task dies (IRQs masked).
Reclaimed reclaim_task(sched::Task* task);
// Totals since boot (kernel://status, tests).
Reclaimed reclaimed_total();

} // namespace handlers

// Records exchanged with introspection calls (abi/introspect.h).
namespace sysinfo {
using abi::MemInfo;
using abi::SchedInfo;
using abi::TaskInfo;
} // namespace sysinfo

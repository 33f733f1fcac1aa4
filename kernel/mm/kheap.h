#pragma once
// The kernel heap (slab size classes over buddy pages) with per-owner accounting. An allocation
// is charged to the running task, taken by the kernel: code running in a task (tool code
// included) cannot name another owner, so a task's limit holds and its memory is known. Kernel
// objects that outlive the task asking for them (the vector store's collections, the kernel's
// own request records) are charged to a kernel owner with alloc_for. When a task ends, the
// scheduler releases what is still charged to it (release_task).
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>
#include <mm/heap.h>

namespace kheap {

// Heap owners that are not tasks (task ids are 1..sched::kMaxTasks).
enum class Owner : uint16_t {
    Kernel = 0,
    Store = 255, // vector collections: they belong to the store, not to the call that made them
};

void init();
bool ready();
// Charged to the running task (to Owner::Kernel before tasks run).
ktl::Result<void*> alloc(size_t size);
// Kernel code only: memory that belongs to no task.
ktl::Result<void*> alloc_for(Owner owner, size_t size);
void free(void* ptr);
uint64_t used_by(uint16_t owner);
void set_limit(uint16_t owner, uint64_t bytes);
// Frees everything still charged to a task that has ended, and clears its limit.
mm::Heap::Released release_task(uint32_t task_id);
mm::HeapStats stats();

} // namespace kheap

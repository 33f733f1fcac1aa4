#pragma once
// The kernel heap (slab size classes over buddy pages) with per-task accounting. operator new
// charges the running task; kmalloc lets callers name the owner explicitly.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>
#include <mm/heap.h>

namespace kheap {

void init();
bool ready();
ktl::Result<void*> alloc(size_t size, uint16_t owner);
void free(void* ptr);
uint64_t used_by(uint16_t owner);
void set_limit(uint16_t owner, uint64_t bytes);
mm::HeapStats stats();

} // namespace kheap

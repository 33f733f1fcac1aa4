#include "kheap.h"

#include "../arch/aarch64/cpu.h"
#include "../panic.h"
#include "../sched/scheduler.h"
#include "pmm.h"

#include <new>

namespace kheap {
namespace {

class PmmPages final : public mm::PageSource {
public:
    ktl::Result<uint64_t> alloc_pages(unsigned order, uint16_t owner) override {
        return pmm::alloc_pages(order, owner);
    }
    void free_pages(uint64_t addr, unsigned order) override { pmm::free_pages(addr, order); }
};

PmmPages g_pages;
alignas(mm::Heap) unsigned char g_heap_storage[sizeof(mm::Heap)];
mm::Heap* g_heap = nullptr;

} // namespace

void init() { g_heap = new (g_heap_storage) mm::Heap(g_pages); }
bool ready() { return g_heap != nullptr; }

ktl::Result<void*> alloc_for(Owner owner, size_t size) {
    if (!g_heap)
        return ktl::Error::NoMemory;
    arch::IrqGuard guard;
    return g_heap->alloc(size, static_cast<uint16_t>(owner));
}

ktl::Result<void*> alloc(size_t size) {
    if (!g_heap)
        return ktl::Error::NoMemory;
    arch::IrqGuard guard;
    const sched::Task* self = sched::started() ? sched::current() : nullptr;
    return g_heap->alloc(size, self ? static_cast<uint16_t>(self->id) : static_cast<uint16_t>(Owner::Kernel));
}

mm::Heap::Released release_task(uint32_t task_id) {
    if (!g_heap || task_id == 0 || task_id >= static_cast<uint32_t>(Owner::Store))
        return {};
    arch::IrqGuard guard;
    return g_heap->release_owner(static_cast<uint16_t>(task_id));
}

void free(void* ptr) {
    if (!ptr || !g_heap)
        return;
    arch::IrqGuard guard;
    if (auto r = g_heap->free(ptr); !r)
        panic("kheap: free of %p refused (%s): heap corruption or double free", ptr, ktl::error_name(r.error()));
}

uint64_t used_by(uint16_t owner) {
    arch::IrqGuard guard;
    return g_heap ? g_heap->used_by(owner) : 0;
}

void set_limit(uint16_t owner, uint64_t bytes) {
    arch::IrqGuard guard;
    if (g_heap)
        g_heap->set_limit(owner, bytes);
}

mm::HeapStats stats() {
    arch::IrqGuard guard;
    return g_heap ? g_heap->stats() : mm::HeapStats {};
}

} // namespace kheap

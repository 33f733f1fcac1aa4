#include "raft_heap.h"

#include "../arch/aarch64/cpu.h"
#include "../mm/kheap.h"
#include <raft/engine.h>

#include <cstring>

namespace kraft {
namespace {

// Each block carries its size in front (realloc and the accounting need it), 16 bytes so that
// what the engine gets keeps the kernel heap's 16-byte alignment.
constexpr size_t kHeader = 16;
constexpr size_t kMaxAlignment = 16; // the engine asks aligned_alloc only for its libuv I/O

size_t g_budget = 0;
HeapStats g_stats {};

void* take(size_t size) {
    arch::IrqGuard guard; // groups run in tasks; the counts are shared
    if (size > g_budget || g_stats.used + size > g_budget) {
        ++g_stats.refused;
        return nullptr;
    }
    auto mem = kheap::alloc_for(kheap::Owner::Kernel, size + kHeader);
    if (!mem) {
        ++g_stats.refused;
        return nullptr;
    }
    auto* block = static_cast<uint8_t*>(*mem);
    std::memcpy(block, &size, sizeof size);
    g_stats.used += size;
    g_stats.blocks += 1;
    if (g_stats.used > g_stats.peak)
        g_stats.peak = g_stats.used;
    return block + kHeader;
}

size_t size_of(void* p) {
    size_t size = 0;
    std::memcpy(&size, static_cast<uint8_t*>(p) - kHeader, sizeof size);
    return size;
}

void give(void* p) {
    if (!p)
        return;
    arch::IrqGuard guard;
    const size_t size = size_of(p);
    g_stats.used -= size <= g_stats.used ? size : g_stats.used;
    g_stats.blocks -= g_stats.blocks ? 1 : 0;
    kheap::free(static_cast<uint8_t*>(p) - kHeader);
}

void* hook_malloc(void*, size_t size) { return take(size ? size : 1); }
void hook_free(void*, void* p) { give(p); }
void* hook_calloc(void*, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size)
        return nullptr;
    const size_t total = n * size;
    void* p = take(total != 0 ? total : 1);
    if (p)
        std::memset(p, 0, total);
    return p;
}
void* hook_realloc(void*, void* p, size_t size) {
    if (!p)
        return take(size ? size : 1);
    void* q = take(size ? size : 1);
    if (!q)
        return nullptr; // the old block stays the caller's, as realloc says
    const size_t old = size_of(p);
    std::memcpy(q, p, old < size ? old : size);
    give(p);
    return q;
}
void* hook_aligned_alloc(void*, size_t alignment, size_t size) {
    return alignment <= kMaxAlignment ? take(size ? size : 1) : nullptr;
}
void hook_aligned_free(void*, size_t, void* p) { give(p); }

raft_heap g_heap { nullptr, hook_malloc, hook_free, hook_calloc, hook_realloc, hook_aligned_alloc, hook_aligned_free };

} // namespace

void heap_install(size_t budget) {
    {
        arch::IrqGuard guard;
        g_budget = budget;
    }
    raft_heap_set(&g_heap);
}

HeapStats heap_stats() {
    arch::IrqGuard guard;
    return g_stats;
}

} // namespace kraft

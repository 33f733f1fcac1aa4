#pragma once
// The Raft engine's allocator in the kernel (docs/replication.md): every allocation canonical's
// engine makes (entries, message batches, configurations, snapshots) comes from the kernel heap
// through here, within a byte budget, so a group cannot take more than its share and running out
// is an error the engine reports (RAFT_NOMEM), never a panic. The engine's heap hooks are
// process-wide: one budget for every group of the kernel.
#include <cstddef>
#include <cstdint>

namespace kraft {

struct HeapStats {
    uint64_t used;    // bytes the engine holds now (requested sizes)
    uint64_t peak;    // the most it held
    uint64_t refused; // allocations refused: over the budget, or the kernel heap had none
    uint64_t blocks;  // allocations it holds now
};

// Installs the hooks (raft_heap_set) with `budget` bytes; again: a new budget, counts kept.
void heap_install(size_t budget);
HeapStats heap_stats();

} // namespace kraft

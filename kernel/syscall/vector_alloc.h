#pragma once
// Shared by the collection system calls (handlers_vector.cpp) and the named store's
// (handlers_store.cpp): checked creation parameters and the pages and object of a collection.
#include <cstdint>
#include <span>

#include <hnsw/index.h>
#include <ktl/result.h>

#include "../vector/collection.h"
#include "../sched/task.h"
#include "../vector/service.h"

namespace handlers {

struct IndexPages {
    uint64_t addr;
    unsigned order;
    std::span<std::byte> span() const { return { reinterpret_cast<std::byte*>(addr), 4096ull << order }; }
};

// CreateParams read from a caller's buffer, defaults filled in, validated.
ktl::Result<hnsw::Params> create_params(const vector::CreateParams* in);
// Pages for an index arena of `bytes`, within the per-collection budget (a document collection's
// is larger), charged to the store.
ktl::Result<IndexPages> alloc_index_pages(size_t bytes, uint64_t budget = vector::kMaxCollectionBytes);
// An empty collection object owning `pages` (a serial of its own); on failure the pages are freed.
ktl::Result<vector::Collection*> new_collection(IndexPages pages);
// The collection object around a created or loaded index; on failure the pages are freed.
ktl::Result<vector::Collection*> make_collection(ktl::Result<hnsw::Index>&& index, IndexPages pages);
// A collection loaded from a snapshot: checked whole (CRCs, structure, parameters) before it
// exists; corrupt or truncated input is refused. Its memory follows the content unless a
// capacity is asked for (hnsw::Index::load_params). Called by a vector worker (a task, IRQs on):
// a large snapshot takes a while, and the kernel keeps serving meanwhile.
ktl::Result<vector::Collection*> load_collection(std::span<const std::byte> snapshot, uint32_t capacity);
// Queues the load of the caller's snapshot (len bytes at ptr) to a vector worker and blocks the
// caller; `finish` turns the new collection into the system call's answer (a0..a1 of the job are
// the snapshot, a2 the capacity, a3..a4 whatever finish needs).
int64_t submit_load(uint64_t ptr, uint64_t len, uint64_t capacity, vector::Finish finish, uint64_t a3 = 0,
                    uint64_t a4 = 0);
// The caller of a Load was killed while it waited (its tool ran out of time, or was cancelled):
// it has been told the import failed, so nothing may be kept.
inline bool abandoned(const sched::Task* caller) { return !caller || caller->kill_pending; }
// The collection a Load job answered (its result), or null for an error result.
inline vector::Collection* loaded(int64_t result) {
    return result > 0 ? reinterpret_cast<vector::Collection*>(static_cast<uintptr_t>(result)) : nullptr;
}

} // namespace handlers

#pragma once
// Shared by the collection system calls (handlers_vector.cpp) and the named store's
// (handlers_store.cpp): checked creation parameters and the pages and object of a collection.
#include <cstdint>
#include <span>

#include <hnsw/index.h>
#include <ktl/result.h>

#include "../vector/collection.h"

namespace handlers {

struct IndexPages {
    uint64_t addr;
    unsigned order;
    std::span<std::byte> span() const { return { reinterpret_cast<std::byte*>(addr), 4096ull << order }; }
};

// CreateParams read from a caller's buffer, defaults filled in, validated.
ktl::Result<hnsw::Params> create_params(uint64_t ptr);
// Pages for an index arena of `bytes`, within the per-collection budget, charged to the store.
ktl::Result<IndexPages> alloc_index_pages(size_t bytes);
// The collection object around a created or loaded index; on failure the pages are freed.
ktl::Result<vector::Collection*> make_collection(ktl::Result<hnsw::Index>&& index, IndexPages pages);
// A collection loaded from a caller's snapshot (a1 bytes at a0): checked whole (CRCs, structure,
// parameters) before it exists; corrupt or truncated input is refused.
ktl::Result<vector::Collection*> load_collection(uint64_t ptr, uint64_t len);

} // namespace handlers

#pragma once
// The named vector store: collections that outlive any one task, found by name. Only the store
// (one kernel object, reached through a VectorStore capability) knows names; a task that is to
// work on one collection is handed a capability to that collection alone (store_open, which
// needs Grant on the store: the MCP bridge has it, tool tasks never do). Exception context only.
#include <cstdint>
#include <string_view>

#include "collection.h"

namespace vector {

// Limits and layouts shared with tasks (abi/vector.h).
using abi::kMaxNamed;
using abi::kMaxNameLength;
using abi::StageChunk;
using abi::StoreEntry;

// A plain name (abi/vector.h): the store re-checks what the schema already checked.
constexpr bool valid_name(std::string_view name) { return abi::valid_collection_name(name); }

struct Named {
    char name[kMaxNameLength + 1];
    uint8_t length;
    uint64_t object_id; // the collection's kernel object (capabilities name it)
    Collection* collection;
};

// Registration and lookup; the system calls in handlers_store.cpp do the checks around them.
Named* find(std::string_view name);
ktl::Result<Named*> add(std::string_view name, uint64_t object_id, Collection* collection);
void remove(Named* entry);
uint32_t list(StoreEntry* out, uint32_t max);
// A named collection with vectors to link (hnsw::Index::deferred) that no request uses or waits
// for: the service's background work. Null: none.
Collection* idle_with_unlinked();
// A checkpoint's cut: the imports awaiting one are in it. Its end: written (they are durable), or
// not (they stay in memory only: nothing on the disk could name them).
void checkpoint_cut();
void checkpoint_end(bool written);

} // namespace vector

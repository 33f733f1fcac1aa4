#pragma once
// The named vector store: collections that outlive any one task, found by name. Only the store
// (one kernel object, reached through a VectorStore capability) knows names; a task that is to
// work on one collection is handed a capability to that collection alone (store_open, which
// needs Grant on the store: the MCP bridge has it, tool tasks never do). Exception context only.
#include <cstdint>
#include <string_view>

#include "collection.h"

namespace vector {

constexpr uint32_t kMaxNamed = 32;     // collections in the store at once
constexpr uint32_t kMaxNameLength = 64; // bytes; names are [A-Za-z0-9_.-], never "." or ".."

// One row of store_list (layout shared with callers).
// store_stage's argument block: one chunk of a snapshot being imported in pieces.
struct StageChunk {
    uint64_t total;    // the whole snapshot's size (at offset 0: starts, or restarts, the import)
    uint64_t offset;   // must be the bytes staged so far
    uint64_t data;     // the chunk
    uint64_t len;
    uint32_t action;   // 0 stage the chunk, 1 commit (all staged: load and keep), 2 abandon
    uint32_t crc_out;  // written back: CRC-32 of everything staged so far
    uint64_t received_out; // written back: bytes staged so far
    uint64_t capacity;     // commit: the collection's capacity (0: what the snapshot holds plus room to grow)
    uint64_t provenance;   // commit: the node every imported vector is stamped with (the import's own)
};

struct StoreEntry {
    char name[kMaxNameLength + 1];
    uint8_t metric;
    uint8_t durable; // logged to the disk (1) or in memory only (0)
    uint8_t reserved;
    uint32_t dim;
    uint32_t m;
    uint32_t ef_construction;
    uint32_t max_elements;
    uint32_t count; // live vectors when listed (a snapshot: writers may be running)
    uint64_t bytes_budget;
};

// A plain name: 1..64 bytes of letters, digits, '_', '-', '.', not made of dots only (so
// never "." or ".."), no '/' or '\\'. The store re-checks what the schema already checked.
bool valid_name(std::string_view name);

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
// A checkpoint's cut: the imports awaiting one are in it. Its end: written (they are durable), or
// not (they stay in memory only: nothing on the disk could name them).
void checkpoint_cut();
void checkpoint_end(bool written);

} // namespace vector

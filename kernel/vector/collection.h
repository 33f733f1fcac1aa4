#pragma once
// A vector collection: one HNSW index in pages of its own (its memory budget), reached through
// a VectorCollection capability. Index work runs in the vector-store worker tasks, never in a
// system call: calls queue requests, workers take them under a per-collection reader/writer
// discipline (many searches at once; inserts and deletes alone), so no search sees a torn index.
#include <cstdint>

#include <abi/vector.h>
#include <hnsw/index.h>
#include <text/document_index.h>

namespace vector {

// Layouts shared with tasks (abi/vector.h).
using abi::CreateParams;
using Stats = abi::VectorStats;
using abi::kMaxDeleteIds;
using abi::kMaxFilterIds;
using abi::SearchFilter;

struct Collection {
    hnsw::Index index;
    uint64_t pages = 0;
    unsigned order = 0;
    uint32_t readers = 0;       // requests running now that only read
    bool writer = false;        // a writing request is running
    uint32_t queued_writes = 0; // writes waiting: later reads queue behind them (no starvation)
    uint32_t outstanding = 0;   // queued + running requests (drop refuses while > 0)
    uint64_t writes = 0;        // upserts and deletes served (Stats::writes)
    uint64_t serial = 0;        // Stats::serial: a name dropped and made again names another collection
    // Background linking of the vectors recovery stored unlinked (Op::Link): since when, and how
    // many there were then (for the log line at the end). 0: not linking.
    uint64_t linking_since_ns = 0;
    uint32_t linking_total = 0;
    bool linking_stopped = false;      // a slice failed (the upper-level pool is full): not tried again
    uint64_t link_slices = 0;          // Stats::link_slices: background slices that linked something
    uint64_t link_paused_until_ns = 0; // no new linking slice meanwhile (a drop waiting, an export)
    // Kept in the store under this name and logged to the disk: its writes are answered once
    // durable (durability.h). False for collections outside the store, imported ones (until
    // checkpoints carry snapshots) and those created with durability "memory".
    bool durable = false;
    // Imported while a disk is attached: durable once the next checkpoint holds its snapshot;
    // until then its writes wait (the log cannot name a collection it never saw created).
    bool awaiting_checkpoint = false;
    bool in_checkpoint = false; // awaiting, and in the checkpoint being written now
    // One of the cluster's replicated collections (abi::kCreateReplicated): changed only by the
    // consensus group's applier; anyone else's change goes to the group (kernel/vector/
    // replication_desk.h).
    bool replicated = false;
    // A stand-in for a replicated collection other nodes hold (stand_in.h): no index, no pages;
    // its vectors' dimension is stand_in_dim.
    bool stand_in = false;
    uint32_t stand_in_dim = 0;
    // A document collection (abi::kCreateDocuments; docs/documents.md): its documents, their BM25
    // index and embeddings live in `docs` (in the collection's pages); `index` stays empty.
    bool documents = false;
    text::DocumentIndex docs;
    uint8_t name_length = 0;
    char name[65] = {};
};

using abi::kCreateDocuments;
using abi::kCreateMemoryOnly;
using abi::kCreateReplicasMask;
using abi::kCreateReplicasShift;
using abi::kCreateReplicated;
using abi::kMaxCollectionBytes;

} // namespace vector

#pragma once
// A vector collection: one HNSW index in pages of its own (its memory budget), reached through
// a VectorCollection capability. Index work runs in the vector-store worker tasks, never in a
// system call: calls queue requests, workers take them under a per-collection reader/writer
// discipline (many searches at once; inserts and deletes alone), so no search sees a torn index.
#include <cstdint>

#include <hnsw/index.h>

namespace vector {

// Layout shared with callers of vec_create.
struct CreateParams {
    uint32_t dim;
    uint32_t metric;          // 0 L2, 1 cosine, 2 inner product
    uint32_t m;               // 0 = default (16)
    uint32_t ef_construction; // 0 = default (200)
    uint32_t max_elements;
    uint32_t max_ef;          // 0 = default (512)
    uint32_t flags;           // kCreateMemoryOnly
};

// Layout returned by vec_stats.
struct Stats {
    uint64_t count;
    uint64_t deleted;
    uint64_t levels;
    uint64_t bytes_used;
    uint64_t bytes_budget;
    uint64_t distance_computations;
    uint32_t dim;
    uint32_t metric;
    uint64_t writes; // upsert and delete requests served: a paged export checks it did not move
    uint64_t serial; // which collection this is: every one created or loaded this boot gets its own
};

// Optional id filter of vec_search (a5): only these ids may be returned; ascending, unique.
struct SearchFilter {
    uint64_t ids;   // pointer to uint64_t[count]
    uint64_t count; // <= kMaxFilterIds
};
constexpr uint64_t kMaxFilterIds = 4096;
constexpr uint64_t kMaxDeleteIds = 4096; // ids one vec_delete takes together

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
    // Kept in the store under this name and logged to the disk: its writes are answered once
    // durable (durability.h). False for collections outside the store, imported ones (until
    // checkpoints carry snapshots) and those created with durability "memory".
    bool durable = false;
    // Imported while a disk is attached: durable once the next checkpoint holds its snapshot;
    // until then its writes wait (the log cannot name a collection it never saw created).
    bool awaiting_checkpoint = false;
    bool in_checkpoint = false; // awaiting, and in the checkpoint being written now
    uint8_t name_length = 0;
    char name[65] = {};
};

// CreateParams::flags
constexpr uint32_t kCreateMemoryOnly = 1; // durability "memory": never logged, gone at restart

constexpr uint64_t kMaxCollectionBytes = 64ull << 20;

} // namespace vector

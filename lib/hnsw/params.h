#pragma once
// Index parameters, their validation, and the small value types of the public API.
#include <cstddef>
#include <cstdint>

#include <hnsw/limits.h>
#include <ktl/result.h>

namespace hnsw {

enum class Metric : uint8_t {
    L2 = 0,           // squared Euclidean distance
    Cosine = 1,       // 1 - cos(a, b); vectors are normalised on insert (get() returns them so)
    InnerProduct = 2, // 1 - <a, b>
};

struct Params {
    uint32_t dim = 0;
    Metric metric = Metric::L2;
    uint32_t m = 16;                // links per node on levels >= 1; 2*m on level 0
    uint32_t ef_construction = 200; // candidate list size while inserting
    uint32_t max_ef = 512;          // largest per-query ef (sizes the search heaps)
    uint32_t max_elements = 0;      // node slots (live + deleted-not-yet-compacted)
    uint32_t compact_percent = 10;  // compact once deleted slots exceed this % of used slots
    uint64_t seed = 0x9e3779b97f4a7c15ull;

    // InvalidArgs unless: 1 <= dim <= kMaxDim, metric known, kMinM <= m <= kMaxM,
    // 1 <= ef_construction <= kMaxEf, 1 <= max_ef <= kMaxEf, 1 <= max_elements <= kMaxElements,
    // compact_percent <= 100.
    ktl::Result<void> validate() const;

    uint32_t m0() const { return 2 * m; }
};

struct Hit {
    uint64_t id = 0;
    float distance = 0;
};

// Optional search predicate: only ids for which accept() returns true are returned (the
// graph is still traversed through the others).
struct Filter {
    bool (*accept)(uint64_t id, void* ctx) = nullptr;
    void* ctx = nullptr;
};

// Batch progress: report() is called every `every` inserts; returning false cancels.
struct Progress {
    bool (*report)(size_t done, size_t total, void* ctx) = nullptr;
    void* ctx = nullptr;
    uint32_t every = 1024;
};

struct BatchResult {
    size_t inserted = 0;
    ktl::Error error = ktl::Error::None; // first failure; inserts before it stay
    bool cancelled = false;
};

struct Stats {
    uint32_t count = 0;      // live vectors (deferred ones included)
    uint32_t deferred = 0;   // stored and found, not yet linked into the graph (upsert_deferred)
    uint32_t deleted = 0;    // tombstones awaiting compaction
    uint32_t free_slots = 0; // slots ready for reuse (excluding never-used ones)
    uint32_t capacity = 0;   // max_elements
    uint32_t levels = 0;     // top level + 1 (0 when empty)
    uint32_t compactions = 0;
    size_t bytes_used = 0;              // arena bytes carved plus upper-level link blocks in use
    size_t bytes_budget = 0;            // size of the memory given at creation
    uint64_t distance_computations = 0; // by the index's own scratch (inserts, repairs, search())
};

} // namespace hnsw

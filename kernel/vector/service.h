#pragma once
// The vector store service: the request queue between the vec_* system calls (callers block)
// and the worker tasks (which serve requests with vec_serve). Exception context only.
#include <cstdint>

#include "../ipc/sync.h"
#include "collection.h"

namespace vector {

enum class Op : uint8_t { Insert = 1, Search, Get, Delete, Stats, Export };
constexpr bool is_write(Op op) { return op == Op::Insert || op == Op::Delete; }

// What a worker receives (written into its buffer by vec_serve).
struct Job {
    uint64_t request; // token to hand back with the result
    Op op;
    Collection* collection;
    uint64_t a[5];
};

// Queues a request from the calling task and blocks it; the result arrives when a worker
// completes it. Returns the outcome for the syscall.
ipc::Outcome submit(Op op, Collection* collection, const uint64_t (&args)[5]);
// Worker side: completes `done` (0 = none) with `result`, then hands over the next runnable
// request into *job_out, or blocks the worker until there is one.
ipc::Outcome serve(uint64_t done, int64_t result, Job* job_out);

struct ServiceStats {
    uint64_t submitted;
    uint64_t completed;
    uint32_t queued;
    uint32_t running;
    uint32_t max_concurrent_reads;
};
ServiceStats stats();

} // namespace vector

#pragma once
// The vector store service: the request queue between the vec_* system calls (callers block)
// and the worker tasks (which serve requests with vec_serve). Exception context only.
#include <cstdint>

#include "../ipc/sync.h"
#include "../sched/task.h"
#include "collection.h"

namespace vector {

// Load builds a new collection from a snapshot (no collection yet: job.collection is null):
// a0 snapshot, a1 its length, a2 the capacity asked for (0: hnsw::Index::load_capacity's
// default). The worker runs it preemptible and below the network and the MCP bridges, however
// long it takes, and answers the new Collection* as its result; the request's Finish hook turns
// that into the caller's answer (keep it under a name, or grant it).
// Link: links deferred vectors into the collection's graph (hnsw::Index::link_deferred), at most
// a0 of them; answers how many stay unlinked. It holds the collection alone, like a write, but
// changes nothing a search answers, so it is never logged. The service hands it to an idle worker
// itself (background work, no caller), never while a checkpoint is taken; it changes the
// collection's snapshot, so a paged export compares Stats::link_slices as it compares writes.
// DocUpsert, DocDelete, DocSearch, DocGet: a document collection's (handlers_documents.cpp has
// their arguments). A document search runs alone on its collection: the indexes' search scratch
// is one per collection.
enum class Op : uint8_t {
    Insert = 1,
    Search,
    Get,
    Delete,
    Stats,
    Export,
    Load,
    Link,
    DocUpsert,
    DocDelete,
    DocSearch,
    DocGet
};
// A change callers make (logged for a durable collection).
constexpr bool is_change(Op op) {
    return op == Op::Insert || op == Op::Delete || op == Op::DocUpsert || op == Op::DocDelete;
}
// Orders like a write: later requests on its collection wait for it (unless it is parked).
constexpr bool is_write(Op op) { return is_change(op) || op == Op::Link; }
// Runs alone on its collection (no search beside it): a write, or a document search (its
// collection's search scratch is one). A document search orders like a read: a write parked for
// the journal does not hold it, so a checkpoint's export never waits behind it.
constexpr bool is_exclusive(Op op) { return is_write(op) || op == Op::DocSearch; }
// Insert's a4: store without linking (recovery's replay; the service links them afterwards).
constexpr uint64_t kInsertDeferLinks = 1;
// Vectors one Link links: short enough that a search queued behind it waits little (about 4 ms a
// vector of 100 floats in a store of 10,000 under TCG).
constexpr uint64_t kLinkSlice = 4;
constexpr uint8_t kLoadPriority = 12; // below tool tasks (15), bridges (16) and the network (17)
// A request is served at the worker's own priority unless its submitter runs below the tool tasks
// (the storage task replaying the log at boot): then at the submitter's, so that background work
// handed to a worker stays background and the bridges and tool tasks keep answering meanwhile.
constexpr uint8_t kForegroundPriority = 15;

// What a worker receives (written into its buffer by vec_serve).
struct Job {
    uint64_t request; // token to hand back with the result
    Op op;
    Collection* collection;
    uint64_t a[5];
};

// Runs in the worker's vec_serve (exception context) when the worker completes the request:
// returns what the caller's system call answers. `caller` is the blocked submitter.
using Finish = int64_t (*)(const Job& job, int64_t result, sched::Task* caller);

// Queues a request from the calling task and blocks it; the result arrives when a worker
// completes it. Returns the outcome for the syscall.
// `owned`: kernel heap memory the request's arguments point into (a copy of the caller's bytes),
// freed by the service once the request is answered and its record written (also when submit
// refuses it).
ipc::Outcome submit(Op op, Collection* collection, const uint64_t (&args)[5], Finish finish = nullptr,
                    void* owned = nullptr);
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

// Hands queued requests to idle workers again: the journal made room for logged writes that
// waited for it (exception context).
void kick();

} // namespace vector

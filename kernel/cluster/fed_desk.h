#pragma once
// Federated searches waiting for the cluster task (issue 35; docs/swarm.md "Federated search"): a
// tool's fed_search leaves its query here and polls fed_result; the cluster task takes each
// query, scatters it, gathers the answers and leaves the merged result here. Kernel side: every
// function masks IRQs itself (both sides are tasks; the table is small and fixed).
#include <cstddef>
#include <cstdint>

#include <abi/cluster.h>

namespace ipc {
struct Outcome; // (kernel/ipc/sync.h: the system-call side only; this header is the cluster task's too)
}

namespace clusterd::fed {

constexpr size_t kSlots = 4;
constexpr uint32_t kMaxDim = 4096;

// --- system call side ---
// What a query carries at its `vector` (0: nothing), or 0 with `valid` false for a query that does
// not add up (its mode, op, dim, k, flags and filter).
size_t input_bytes(const cluster_abi::FedQuery& query, bool& valid);
// A copy of the query and what it carries (at `input`, then a search's filter ids at `filter`:
// one block, the filter's after input_bytes - filter_count * 8) is kept; returns its id (> 0), or
// -WouldBlock (every slot in use), -InvalidArgs, -NoMemory.
int64_t submit(const cluster_abi::FedQuery& query, const void* input, const void* filter);
// 1 with the result copied to `out` (the slot is then free), -NotFound (no such search of the
// calling task's: a search's result is its caller's only); while it gathers, the caller waits
// (blocked) until it is merged or 100 ms passed, answered 0 or -TimedOut: it asks again.
ipc::Outcome result(uint32_t id, cluster_abi::FedResult* out);

// --- the cluster task ---
// The oldest query not yet taken: its id, a copy of it and of what it carries (at most kMaxDim
// floats' bytes). 0: none.
uint32_t take(cluster_abi::FedQuery& query, void* input);
// The merged result of search `id` (left for the caller's next fed_result).
void complete(uint32_t id, const cluster_abi::FedResult& result);

} // namespace clusterd::fed

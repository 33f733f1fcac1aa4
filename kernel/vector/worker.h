#pragma once
// The vector store's worker tasks: they serve queued vec_* requests in task context, so long
// index work is preemptible and searches on one collection run in parallel.
#include <cstdint>

namespace vector {

struct WorkerArgs {
    uint32_t service_slot;
};

int64_t worker_main(void* args);

} // namespace vector

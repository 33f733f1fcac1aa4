#pragma once
// In-kernel test cases and the helpers they share.
#include <cstdint>

#include "../console.h"
#include <abi/sys.h>
#include "ktest.h"

namespace ktest {

using Case = bool (*)(const Caps& caps);

bool sched_fairness(const Caps& caps);
bool task_kill(const Caps& caps);
bool syscall_budget(const Caps& caps);
bool task_reclaim(const Caps& caps);
bool sync_objects(const Caps& caps);
bool queue_100k(const Caps& caps);
bool stack_overflow(const Caps& caps);
bool caps_refused(const Caps& caps);
bool exec_token(const Caps& caps);
bool fp_state(const Caps& caps);
bool regions(const Caps& caps);
bool vector_index(const Caps& caps);
bool timers(const Caps& caps);
bool vector_store(const Caps& caps);
bool vector_grants(const Caps& caps);
bool bench(const Caps& caps);
bool raft_group(const Caps& caps);
bool raft_replace(const Caps& caps);

// Creates a task running fn(arg) at `priority` (below the runner's 20 so it starts only when
// the runner blocks); returns its Task capability slot, or a negative error.
int64_t spawn(const Caps& caps, const char* name, int64_t (*fn)(void*), void* arg, uint8_t priority);
int64_t join(uint32_t task_slot, uint64_t timeout_ns = 0);
// Gives the task behind task_slot a copy of my capability `slot` (rights mask); returns its slot there.
int64_t share(uint32_t slot, uint32_t task_slot, uint32_t rights_mask);

constexpr uint64_t kMs = 1000000ull;

#define KT_CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            console::printf("ktest:   check failed: %s: ", #cond); \
            console::printf(__VA_ARGS__); \
            console::printf("\n"); \
            return false; \
        } \
    } while (0)

} // namespace ktest

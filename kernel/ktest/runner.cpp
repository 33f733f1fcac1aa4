#include "../power.h"
#include "cases.h"

#include <string_view>

namespace ktest {
namespace {

struct Named {
    const char* name;
    Case fn;
};

const Named kCases[] = {
    { "sched", sched_fairness }, { "sync", sync_objects },        { "queue", queue_100k },
    { "stack", stack_overflow }, { "caps", caps_refused },        { "token", exec_token },
    { "fp", fp_state },          { "regions", regions },          { "timer", timers },
    { "hnsw", vector_index },    { "vectors", vector_store },     { "vecgrant", vector_grants },
    { "kill", task_kill },       { "budget", syscall_budget },    { "reclaim", task_reclaim },
    { "raft", raft_group },      { "raftreplace", raft_replace }, { "bench", bench },
};

} // namespace

int64_t spawn(const Caps& caps, const char* name, int64_t (*fn)(void*), void* arg, uint8_t priority) {
    return sys::task_create(caps.factory, fn, arg, priority, name);
}

int64_t join(uint32_t task_slot, uint64_t timeout_ns) { return sys::task_join(task_slot, timeout_ns); }

int64_t share(uint32_t slot, uint32_t task_slot, uint32_t rights_mask) {
    return sys::cap_grant(slot, rights_mask, 0, task_slot);
}

int64_t task_main(void* arg) {
    const Caps& caps = *static_cast<const Caps*>(arg);
    uint32_t passed = 0, failed = 0;
    for (const auto& c : kCases) {
        if (caps.name != "all" && caps.name != c.name)
            continue;
        console::printf("ktest: %s ...\n", c.name);
        bool ok = c.fn(caps);
        console::printf("ktest: %s %s\n", c.name, ok ? "PASS" : "FAIL");
        (ok ? passed : failed)++;
    }
    if (passed + failed == 0)
        console::printf("ktest: no test named '%.*s'\n", static_cast<int>(caps.name.size()), caps.name.data());
    console::printf("ktest summary: %u passed, %u failed\n", passed, failed);
    power::poweroff(failed == 0 && passed > 0 ? power::kExitOk : 1);
}

} // namespace ktest

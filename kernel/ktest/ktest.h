#pragma once
// In-kernel tests (boot argument `ktest=NAME|all`): run as tasks through the real system calls,
// print one result line each and a summary, then power off with status 0 (all passed) or 1.
// The QEMU integration tests read the lines; figures (fairness, switch and syscall costs) are
// printed for the closing notes.
#include <cstdint>
#include <string_view>

namespace ktest {

struct Caps {
    std::string_view name;
    uint32_t factory = ~0u;
    uint32_t introspection = ~0u;
    uint32_t audit = ~0u;
    uint64_t factory_object = 0;
    uint32_t store = ~0u; // the named vector store (Grant: tests hand out tokens for it)
};

int64_t task_main(void* caps);

} // namespace ktest

#pragma once
// A line-oriented console shell for people and integration tests: status, log, clock, task,
// memory, capability and power commands. It runs as a task; input arrives through the UART's
// interrupt-driven receive ring, which signals the console event it waits on.
#include <cstdint>

namespace shell {

struct Caps {
    uint32_t factory = ~0u;
    uint32_t introspection = ~0u;
    uint32_t audit = ~0u;
    uint32_t serial = ~0u; // the console line (Device)
};

int64_t task_main(void* caps);

} // namespace shell

#pragma once
// MCP on the serial line (boot argument mcp=serial): one task reads newline-delimited JSON-RPC
// from the console UART, hands each message to the dispatcher and writes the reply as one line.
#include <cstdint>

namespace mcpd {

struct SerialCaps {
    uint32_t serial = ~0u;
    uint32_t introspection = ~0u;
    uint32_t factory = ~0u; // creates tool tasks
    uint32_t audit_region = ~0u; // the append-only MCP audit trail (shared with the HTTP bridge)
    uint32_t audit = ~0u;   // reads the kernel's capability audit records
    uint32_t store = ~0u;   // the named vector store (all rights: tokens for vector tools come from it)
    void (*wake)() = nullptr; // returns the task's pending serial read early (tool calls ended)
};

int64_t serial_task_main(void* caps);

} // namespace mcpd

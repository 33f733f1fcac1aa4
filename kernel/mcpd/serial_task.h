#pragma once
// MCP on the serial line (boot argument mcp=serial): one task reads newline-delimited JSON-RPC
// from the console UART, hands each message to the dispatcher and writes the reply as one line.
#include <cstdint>

#include "bridge_config.h"

namespace mcpd {

struct SerialCaps {
    uint32_t serial = ~0u;
    BridgeCaps bridge;
    void (*wake)() = nullptr; // returns the task's pending serial read early (tool calls ended)
};

int64_t serial_task_main(void* caps);

} // namespace mcpd

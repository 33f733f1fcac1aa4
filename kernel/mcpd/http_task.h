#pragma once
// MCP over Streamable HTTP: one task serves every connection of the HTTP network endpoint
// (kernel/net/endpoint.h) through the NetEndpoint capability it holds, frames requests with
// lib/http, and hands them to the transport (mcp/transport/streamable_http.h) and so to the
// same dispatcher pipeline as the serial line. Its tool calls run in tool tasks of its own.
#include <cstdint>

#include "bridge_config.h"

namespace mcpd {

struct HttpCaps {
    uint32_t endpoint = ~0u; // the NetEndpoint (read: poll/recv, write: send/close)
    uint32_t wake = ~0u;     // Event: connections changed or a tool call has output
    BridgeCaps bridge;
    void (*signal)() = nullptr; // signals `wake` (tool tasks call it)
};

int64_t http_task_main(void* caps);

} // namespace mcpd

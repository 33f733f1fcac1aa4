#pragma once
// The kernel's MCP tools: descriptors (schemas, scopes) and their handlers.
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

std::span<const mcp::Tool> kernel_tools();

} // namespace mcpd

#pragma once
// The kernel's MCP tools: descriptors (schemas, scopes) and their handlers.
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

struct ToolImpl;

std::span<const mcp::Tool> kernel_tools();
std::span<const ToolImpl> kernel_tool_impls();

} // namespace mcpd

#pragma once
// The cluster's MCP tools and the cluster://members resource (empty lists on a node without
// membership).
#include <cstdint>
#include <span>

#include <json/writer.h>
#include <mcp/server/server.h>

namespace mcpd {

struct ToolImpl;

std::span<const mcp::Tool> cluster_tools();
std::span<const ToolImpl> cluster_tool_impls();
// cluster://members through the bridge's Cluster capability `cap`.
bool read_cluster_members(uint32_t cap, json::Writer& w, mcp::ToolError& err);
uint64_t cluster_generation(uint32_t cap);

} // namespace mcpd

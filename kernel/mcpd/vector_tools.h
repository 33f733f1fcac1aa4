#pragma once
// The vector store as MCP tools (issue 7): collection_create / _drop / _list / _stats /
// _export / _import and vector_upsert / _search / _get / _delete. Each call's token grants either
// the store (create, import and drop: write; list: read) or the one collection the call names
// (read, write or both), so a tool task can reach nothing else (tool_exec.h).
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

struct ToolImpl;

std::span<const mcp::Tool> vector_tools();
std::span<const ToolImpl> vector_tool_impls();

} // namespace mcpd

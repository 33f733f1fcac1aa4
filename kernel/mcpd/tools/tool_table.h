#pragma once
// The tools this kernel serves (tool_table.cpp): their descriptors for the dispatcher, in
// tools/list order, and the definition behind each.
#include <span>
#include <string_view>

#include <mcp/server/server.h>

#include "tool_def.h"

namespace mcpd {

// Every tool served on this boot, in tools/list order (the profile decides some: tool_table.cpp).
std::span<const mcp::Tool> all_tools();
// The definition behind a descriptor of all_tools(), found by its position (nullptr for any
// other descriptor): what the dispatcher matched is what runs.
const ToolDef* def_of(const mcp::Tool& tool);
// The definition of the served tool of that name (nullptr: none). Only for a name kept as data,
// as a proposal keeps the tool it will run.
const ToolDef* def_named(std::string_view name);

} // namespace mcpd

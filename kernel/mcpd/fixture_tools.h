#pragma once
// The conformance suite's fixture tools as kernel tools (boot argument profile=conformance):
// descriptors from mcp/fixtures, bodies run like every tool's, in a task of their own holding
// one execution token that grants nothing (Grant::Nothing).
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

struct ToolImpl;

// The fixtures are served (tool table, resources, prompts, allowlists) only in this profile.
bool conformance_profile();
std::span<const ToolImpl> fixture_tool_impls();

} // namespace mcpd

// The kernel's tool table: descriptors for the dispatcher (tools/list order: kernel tools, the
// cluster's (on a node that runs membership), then
// vector tools, then, in the faults profile only, the misbehaving test tool, in the conformance
// profile only, the suite's fixtures) and the
// implementation (body and capability grant) behind each name.
#include "cluster_tools.h"
#include "fault_tools.h"
#include "fixture_tools.h"
#include "kernel_tools.h"
#include "proposal_tools.h"
#include "tool_exec.h"
#include "vector_tools.h"

#include <mcp/fixtures/conformance.h>

namespace mcpd {
namespace {

constexpr size_t kMaxTools = 64;

struct Table {
    mcp::Tool tools[kMaxTools];
    size_t count = 0;
};

Table g_table;
bool g_built = false;

// Built on first use by the MCP task (the only caller), from constant lists.
const Table& table() {
    if (!g_built) {
        auto none = [] { return std::span<const mcp::Tool>(); };
        std::span<const mcp::Tool> (*fixtures)() = none;
        if (conformance_profile())
            fixtures = mcp::fixtures::tools;
        for (auto list : { kernel_tools, cluster_tools, vector_tools, proposal_tools, fault_tools, fixtures })
            for (const auto& tool : list())
                if (g_table.count < kMaxTools)
                    g_table.tools[g_table.count++] = tool;
        g_built = true;
    }
    return g_table;
}

} // namespace

std::span<const mcp::Tool> all_tools() { return { table().tools, table().count }; }

const ToolImpl* impl_of(std::string_view tool_name) {
    for (auto list : { kernel_tool_impls, cluster_tool_impls, vector_tool_impls, proposal_tool_impls, fault_tool_impls,
                       fixture_tool_impls })
        for (const auto& impl : list())
            if (tool_name == impl.name)
                return &impl;
    return nullptr;
}

} // namespace mcpd

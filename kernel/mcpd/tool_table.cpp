// The kernel's tool table: descriptors for the dispatcher (tools/list order: kernel tools, then
// vector tools) and the implementation (body and capability grant) behind each name.
#include "kernel_tools.h"
#include "tool_exec.h"
#include "vector_tools.h"

namespace mcpd {
namespace {

constexpr size_t kMaxTools = 32;

struct Table {
    mcp::Tool tools[kMaxTools];
    size_t count = 0;
};

Table g_table;
bool g_built = false;

// Built on first use by the MCP task (the only caller), from two constant lists.
const Table& table() {
    if (!g_built) {
        for (auto list : { kernel_tools, vector_tools })
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
    for (auto list : { kernel_tool_impls, vector_tool_impls })
        for (const auto& impl : list())
            if (tool_name == impl.name)
                return &impl;
    return nullptr;
}

} // namespace mcpd

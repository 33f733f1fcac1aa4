// The kernel's tool table: every tool, one row each, in tools/list order, with where it is served.
//
// Adding a tool = one file, tools/<family>/<tool>.cpp, with its schema, its body and its ToolDef
// (MCPD_TOOL(id), tool_def.h), and one row below. A tool that changes stored data declares its
// sink class in that ToolDef or does not compile; the sink policy and the dispatcher read the
// ToolDef, never the tool's name.
#include "tool_table.h"
#include "profile.h"

#include "../../log.h"

#include <mcp/fixtures/conformance.h>

namespace mcpd {
namespace {

// Where a row is served: always, on a node that runs membership (`cluster=`), in the faults
// profile only (the misbehaving test tool), in the conformance profile only (the suite's fixtures).
enum class Served : uint8_t { Always, ClusterNode, Faults, Conformance };

#define MCPD_TOOL_ROWS(ROW) \
    ROW(kernel_info, Always) \
    ROW(kernel_tasks, Always) \
    ROW(kernel_caps, Always) \
    ROW(kernel_mem, Always) \
    ROW(kernel_log, Always) \
    ROW(kernel_perf, Always) \
    ROW(kernel_diagnose, Always) \
    ROW(cluster_status, ClusterNode) \
    ROW(cluster_ping, ClusterNode) \
    ROW(cluster_replace, ClusterNode) \
    ROW(collection_create, Always) \
    ROW(collection_drop, Always) \
    ROW(collection_list, Always) \
    ROW(collection_stats, Always) \
    ROW(vector_upsert, Always) \
    ROW(vector_search, Always) \
    ROW(vector_get, Always) \
    ROW(vector_delete, Always) \
    ROW(collection_export, Always) \
    ROW(collection_import, Always) \
    ROW(text_embed, Always) \
    ROW(document_upsert, Always) \
    ROW(document_search, Always) \
    ROW(document_get, Always) \
    ROW(document_delete, Always) \
    ROW(proposal_list, Always) \
    ROW(proposal_get, Always) \
    ROW(proposal_approve, Always) \
    ROW(proposal_reject, Always) \
    ROW(test_fault, Faults) \
    ROW(test_simple_text, Conformance) \
    ROW(test_image_content, Conformance) \
    ROW(test_audio_content, Conformance) \
    ROW(test_embedded_resource, Conformance) \
    ROW(test_multiple_content_types, Conformance) \
    ROW(test_tool_with_logging, Conformance) \
    ROW(test_tool_with_progress, Conformance) \
    ROW(test_error_handling, Conformance) \
    ROW(test_reconnection, Conformance) \
    ROW(json_schema_2020_12_tool, Conformance) \
    ROW(test_sampling, Conformance) \
    ROW(test_elicitation, Conformance) \
    ROW(test_elicitation_sep1034_defaults, Conformance) \
    ROW(test_elicitation_sep1330_enums, Conformance) \
    ROW(test_custom_headers, Conformance) \
    ROW(test_missing_capability, Conformance) \
    ROW(test_logging_tool, Conformance) \
    ROW(test_streaming_elicitation, Conformance) \
    ROW(test_input_required_result_elicitation, Conformance) \
    ROW(test_input_required_result_sampling, Conformance) \
    ROW(test_input_required_result_list_roots, Conformance) \
    ROW(test_input_required_result_request_state, Conformance) \
    ROW(test_input_required_result_multiple_inputs, Conformance) \
    ROW(test_input_required_result_multi_round, Conformance) \
    ROW(test_input_required_result_tampered_state, Conformance) \
    ROW(test_input_required_result_capabilities, Conformance)

} // namespace

namespace tools {
#define MCPD_DECLARE_TOOL(id, served) extern const ToolDef id;
MCPD_TOOL_ROWS(MCPD_DECLARE_TOOL)
#undef MCPD_DECLARE_TOOL
} // namespace tools

namespace {

struct Row {
    const ToolDef* def;
    Served served;
};

constexpr Row kRows[] = {
#define MCPD_ROW(id, served) { &tools::id, Served::served },
    MCPD_TOOL_ROWS(MCPD_ROW)
#undef MCPD_ROW
};

constexpr size_t kMaxTools = 64;
static_assert(sizeof kRows / sizeof kRows[0] <= kMaxTools, "the tool table holds 64 tools at most");

// Each definition has one row (what each row may do was checked when its definition compiled).
constexpr bool rows_distinct() {
    for (const Row& a : kRows)
        for (const Row& b : kRows)
            if (&a != &b && a.def == b.def)
                return false;
    return true;
}
static_assert(rows_distinct(), "a tool is listed twice");

// What is served on this boot: the descriptors (the dispatcher's list) and, at the same position,
// the definition behind each.
struct Table {
    mcp::Tool tools[kMaxTools];
    const ToolDef* defs[kMaxTools];
    size_t count = 0;
};

Table g_table;
bool g_built = false;

bool served(Served where) {
    switch (where) {
    case Served::Always: return true;
    case Served::ClusterNode: return cluster_node();
    case Served::Faults: return faults_profile();
    case Served::Conformance: return conformance_profile();
    }
    return false;
}

// A fixture's descriptor, from the portable list (found by name once, when the table is built).
const mcp::Tool* fixture_descriptor(const char* name) {
    for (const auto& t : mcp::fixtures::tools())
        if (std::string_view(t.name) == name)
            return &t;
    return nullptr;
}

// Built on first use by the MCP task (the only caller), from the rows.
const Table& table() {
    if (!g_built) {
        for (const Row& row : kRows) {
            if (!served(row.served))
                continue;
            const mcp::Tool* descriptor = row.def->descriptor ? row.def->descriptor : fixture_descriptor(row.def->name);
            if (!descriptor) {
                KLOG_ERROR("mcp: tool %s withheld: mcp/fixtures has no descriptor for it", row.def->name);
                continue;
            }
            g_table.tools[g_table.count] = *descriptor;
            g_table.defs[g_table.count++] = row.def;
        }
        g_built = true;
    }
    return g_table;
}

} // namespace

std::span<const mcp::Tool> all_tools() { return { table().tools, table().count }; }

const ToolDef* def_of(const mcp::Tool& tool) {
    // By address, not by name: the descriptor's position in the table is the definition's.
    const Table& t = table();
    const uintptr_t at = reinterpret_cast<uintptr_t>(&tool), first = reinterpret_cast<uintptr_t>(t.tools);
    if (at < first)
        return nullptr;
    const size_t i = (at - first) / sizeof(mcp::Tool);
    return i < t.count && &t.tools[i] == &tool ? t.defs[i] : nullptr;
}

const ToolDef* def_named(std::string_view name) {
    const Table& t = table();
    for (size_t i = 0; i < t.count; ++i)
        if (name == t.defs[i]->name)
            return t.defs[i];
    return nullptr;
}

} // namespace mcpd

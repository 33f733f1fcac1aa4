#pragma once
// The kernel's MCP resources: read-only snapshots (kernel://status, kernel://log, audit://log,
// kernel://composition, kernel://perf).
#include <cstdint>
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

struct ResourceContext {
    uint32_t introspection = ~0u;
    uint32_t audit = ~0u;                           // AuditLog capability (kernel capability decisions)
    const mcp::Principal* line_principal = nullptr; // who callers without a key act as on this line
    size_t tools_allowed = 0;
    const char* transport = "serial";
    uint32_t cluster = ~0u;                  // Cluster capability (cluster://members), ~0u without membership
    const mcp::CallStages* stages = nullptr; // the bridge's tools/call stage timing (kernel://perf)
};

void set_resource_context(const ResourceContext& context);
std::span<const mcp::Resource> kernel_resources();
// provenance://node/{id}: a provenance node, its chain of parents and the decisions it led to.
std::span<const mcp::ResourceTemplate> kernel_resource_templates();

} // namespace mcpd

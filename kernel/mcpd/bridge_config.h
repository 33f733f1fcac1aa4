#pragma once
// What the MCP bridges (the serial line's and the HTTP server's) share: the API keys, the tool
// and resource allowlists, the audit hook and the clock. Built once at boot, before any bridge
// runs, and read-only afterwards, so the bridge tasks use it without locks.
#include <mcp/policy/key_store.h>
#include <mcp/server/server.h>

#include <span>

namespace mcpd {

// What every bridge task is granted at boot besides its line.
struct BridgeCaps {
    uint32_t introspection = ~0u;     // read + grant: tokens for the kernel tools, resources, log records
    uint32_t factory = ~0u;           // creates tool tasks
    uint32_t audit = ~0u;             // reads the kernel's capability audit records
    uint32_t audit_region = ~0u;      // the append-only MCP audit trail (shared by the bridges)
    uint32_t provenance_region = ~0u; // the provenance nodes' ring (shared the same way)
    uint32_t store = ~0u;             // the named vector store (all rights: tokens for vector tools come from it)
    uint32_t cluster = ~0u; // cluster membership (read, write, grant: tokens for the cluster tools; cluster://members)
};

// Reads the boot configuration (key=, tools=, resources=). Logs what it installed or refused.
void bridge_config_init();

const mcp::KeyStore& api_keys();
// What the boot configuration got wrong (refused key= or limit= values, overrides with no
// effect), at most 8, for kernel://status.
std::span<const char[160]> config_warnings();
// Each principal's call limits: the `rate=` bucket and the contracts' in-flight cap.
mcp::LimitConfig limit_config();
// The one limiter every bridge admits calls through: a principal has one bucket and one
// in-flight count whichever line it calls on.
mcp::CallLimiter& call_limiter();
// The server configuration every bridge starts from (its settings: the bridge, bridge.h, is the
// server's host); the bridge sets transport, gate and subscriptions.
mcp::ServerConfig base_server_config();
// Records one decision of the pipeline in the audit trail (and refusals in the kernel log). The
// record is staged for the disk; a call that changed the store is answered once the commit
// carrying it is durable (the executor's Syncing calls).
void audit_decision(const mcp::AuditEvent& event);
// The same through the caller's own slot for the trail's region (a bridge's, as it attached it),
// without looking the calling task up at every decision.
void audit_decision(const mcp::AuditEvent& event, uint32_t audit_slot);
// Whether a tool's action changes the store: its tool task's writes are answered once staged
// (abi::kTaskAckStaged) and the bridge answers once they are durable (storage_barrier).
bool changes_store(std::string_view action);

// A principal for a transport's callers without a key (the serial line's console, HTTP's
// default role). Anonymous gives nullptr.
const mcp::Principal* line_principal(mcp::Principal& storage, const char* name, std::string_view role,
                                     mcp::Role fallback, uint16_t id);

} // namespace mcpd

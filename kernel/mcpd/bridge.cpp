#include "bridge.h"

#include "../bootargs.h"
#include "../audit/trail.h"
#include "../clock.h"
#include "../log.h"
#include "../mm/kheap.h"
#include <abi/sys.h>
#include "kernel_resources.h"
#include "provenance_log.h"

namespace mcpd {

// The server only keeps references: its configuration is filled in below, before any message.
Bridge::Bridge(const BridgeSetup& setup) : m_caps(setup.caps), m_server(m_config, call_limiter(), *this) {
    m_exec.configure({ m_caps.factory, m_caps.introspection, m_caps.store, ~0u, m_caps.cluster },
                     uint64_t(bootargs::get().tool_time_ms) * 1000000, bootargs::get().tool_output_bytes, setup.wake,
                     setup.slots);
    if (audit::trail::attach(m_caps.audit_region))
        m_audit_slot = m_caps.audit_region;
    else
        KLOG_ERROR("%sno audit region; decisions are counted as dropped", setup.log_prefix);
    if (provenance_log_attach(m_caps.provenance_region))
        m_provenance_slot = m_caps.provenance_region;
    else
        KLOG_ERROR("%sno provenance region; requests get no provenance node", setup.log_prefix);
    m_config = base_server_config();
    m_config.gate = &m_gate;
    m_config.transport = setup.transport;
    m_config.subscriptions = true; // every transport delivers them (the line itself, HTTP's standalone stream)
    m_server.compile_schemas();    // once here, not at every call
    set_resource_context({ m_caps.introspection, m_caps.audit, setup.line, m_config.allowlist.size(), setup.transport,
                           m_caps.cluster, &m_server.stages() });
}

void Bridge::resume_audit() {
    abi::StorageInfo storage {};
    if (sys::storage_info(m_caps.introspection, &storage) == 0)
        audit::trail::resume(storage.recovered_audit);
}

void Bridge::now_rfc3339(char* out, size_t cap) { clock::rfc3339_now(out, cap); }
uint64_t Bridge::now_ns() { return clock::monotonic_ns(); }
// A change's durability is the executor's to wait for (Syncing), not the trail's.
bool Bridge::audit(const mcp::AuditEvent& event) {
    audit_decision(event, m_audit_slot);
    return true;
}
uint64_t Bridge::provenance(const mcp::ProvenanceNode& node) { return provenance_log_record(node, m_provenance_slot); }

bool Bridge::start(const mcp::Tool& tool, const json::Value& arguments, const mcp::PendingCall& call,
                   mcp::ToolError& err) {
    return m_exec.start(tool, arguments, call, err);
}

void Bridge::cancel(std::string_view raw_id, bool id_is_string, uint32_t origin) {
    m_exec.cancel(raw_id, id_is_string, origin);
}

void Bridge::respond(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error,
                     uint32_t origin) {
    m_exec.respond(raw_id, id_is_string, body, is_error, origin);
}

// Charged to the bridge parsing the message, given back when it is answered.
json::Node* Bridge::alloc_nodes(size_t count) {
    auto mem = kheap::alloc(count * sizeof(json::Node));
    return mem ? static_cast<json::Node*>(*mem) : nullptr;
}

void Bridge::free_nodes(json::Node* nodes) { kheap::free(nodes); }

} // namespace mcpd

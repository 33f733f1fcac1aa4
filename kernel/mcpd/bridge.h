#pragma once
// One MCP bridge's session side, built by the same code for every transport (the serial line's
// task, the HTTP server's): the dispatcher and the host it runs in (this class: the clock, the
// audit trail, provenance, and the tool tasks of its Executor), its authentication gate, and the
// attachments made at bring-up (the audit and provenance regions, the resources' context). The
// transport task builds one and only moves bytes between its line and server().
#include <cstddef>
#include <cstdint>

#include "bridge_config.h"
#include "tool_exec.h"

#include <mcp/policy/auth_gate.h>
#include <mcp/server/host.h>
#include <mcp/server/server.h>

namespace mcpd {

struct BridgeSetup {
    BridgeCaps caps;
    const char* transport = "serial";     // what the audit trail and provenance name: "serial", "http"
    const char* log_prefix = "mcp: ";     // of the bridge's bring-up messages
    void (*wake)() = nullptr;             // returns the task from its wait when a call ends or reports
    size_t slots = kMaxCalls;             // tool tasks at once, for all the bridge's callers together
    const mcp::Principal* line = nullptr; // who the transport's callers without a key are (nullptr: anonymous)
};

class Bridge final : public mcp::Host {
public:
    explicit Bridge(const BridgeSetup& setup);
    Bridge(const Bridge&) = delete;
    Bridge& operator=(const Bridge&) = delete;

    mcp::Server& server() { return m_server; }
    Executor& executor() { return m_exec; }
    const mcp::ServerConfig& config() const { return m_config; }
    // Once the storage task has replayed the disk's log: the audit trail continues after what the
    // disk gave back.
    void resume_audit();

    // mcp::Host: the kernel's clock, audit trail and provenance ring; calls run in tool tasks.
    void now_rfc3339(char* out, size_t cap) override;
    uint64_t now_ns() override;
    bool audits() const override { return true; }
    bool audit(const mcp::AuditEvent& event) override;
    bool keeps_provenance() const override { return true; }
    uint64_t provenance(const mcp::ProvenanceNode& node) override;
    bool runs_calls() const override { return true; }
    bool start(const mcp::Tool& tool, const json::Value& arguments, const mcp::PendingCall& call,
               mcp::ToolError& err) override;
    void cancel(std::string_view raw_id, bool id_is_string, uint32_t origin) override;
    void respond(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error,
                 uint32_t origin) override;
    json::Node* alloc_nodes(size_t count) override;
    void free_nodes(json::Node* nodes) override;

private:
    const BridgeCaps m_caps;
    // This task's slots for the audit trail's and the provenance ring's regions, once attached
    // (~0u: none): each record goes through them without asking which task is calling.
    uint32_t m_audit_slot = ~0u;
    uint32_t m_provenance_slot = ~0u;
    Executor m_exec;
    mcp::AuthGate m_gate; // this bridge's own: its sources (HTTP peers, the line) are its own
    mcp::ServerConfig m_config;
    mcp::Server m_server;
};

} // namespace mcpd

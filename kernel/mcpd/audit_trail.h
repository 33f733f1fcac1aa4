#pragma once
// The MCP audit trail: one fixed-size record per pipeline decision (contracts "Audit record"),
// appended to an append-only memory region the kernel creates at boot and grants to the bridges. The region's policy
// is enforced by the kernel: once written, a record can be neither changed nor removed, not even
// by the task that wrote it. When the region is full, later decisions are counted as dropped.
#include <cstdint>

#include <json/writer.h>
#include <mcp/server/server.h>

namespace mcpd {

// The region (append-only, audit_trail_bytes() long) is created at boot and granted to every
// bridge; each bridge task attaches its slot for it before recording.
uint64_t audit_trail_bytes();
bool audit_trail_attach(uint32_t region_slot);
void audit_trail_record(const mcp::AuditEvent& event);
// Writes the newest `max` records, oldest first, as a JSON array.
void audit_trail_write(json::Writer& w, uint32_t max);
uint64_t audit_trail_count();
uint64_t audit_trail_dropped();

} // namespace mcpd

#pragma once
// The MCP audit trail: one fixed-size record per pipeline decision (contracts "Audit record"),
// appended to an append-only memory region the MCP task creates at start. The region's policy
// is enforced by the kernel: once written, a record can be neither changed nor removed, not even
// by the task that wrote it. When the region is full, later decisions are counted as dropped.
#include <cstdint>

#include <json/writer.h>
#include <mcp/server/server.h>

namespace mcpd {

// factory: Factory capability slot (to create the region).
bool audit_trail_init(uint32_t factory);
void audit_trail_record(const mcp::AuditEvent& event);
// Writes the newest `max` records, oldest first, as a JSON array.
void audit_trail_write(json::Writer& w, uint32_t max);
uint64_t audit_trail_count();
uint64_t audit_trail_dropped();

} // namespace mcpd

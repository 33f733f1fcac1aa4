#pragma once
// The MCP audit trail (syscall_log.h beside it is the kernel's own log of capability refusals, a
// different thing): one fixed-size record per pipeline decision (contracts "Audit record"),
// appended to a ring region the kernel creates at boot and grants to the bridges. The region's
// policy is enforced by the kernel: once written, a record can be neither changed nor removed by
// anyone; when the ring is full the oldest records give way, and every record says how many had
// given way before it. With a disk every record goes to the disk too (storage/journal.h), and the storage
// task puts the logged ones back into the region at boot: the trail reads across restarts.
// Identical refusals in a burst (a client hammering a bad key) become one record with a repeat
// count, so they cannot push the other decisions out.
#include <cstdint>

#include <json/writer.h>
#include <mcp/server/server.h>

namespace audit::trail {

// The region (a ring of record_bytes() records, bytes() long: boot argument audit_kib=, default
// 1 MiB) is created at boot and granted to every bridge; each bridge task (and the cluster task)
// attaches its slot for it before recording.
uint64_t bytes();
uint32_t record_bytes();
bool attach(uint32_t region_slot);
// The records the storage task put back from the disk (they hold sequence numbers 0..records - 1):
// this boot's records continue after them.
void resume(uint64_t records);
// False when the event was counted into a pending record of identical refusals (not written yet).
bool record(const mcp::AuditEvent& event);
// The same from a task that knows its slot for the region (a bridge: the one it attached, or
// ipc::TaskSlots::kNone), which spares the look-up of the calling task, a system call, per record.
bool record(const mcp::AuditEvent& event, uint32_t region_slot);
// Writes the newest `max` records still held, oldest first, as a JSON array.
void write(json::Writer& w, uint32_t max);
// Writes those of the newest `scan` records that name provenance node `provenance_id`.
void write_node(json::Writer& w, uint64_t provenance_id, uint32_t scan);
uint64_t count();     // records written
uint64_t dropped();   // records that gave way (or could not be written)
uint64_t decisions(); // decisions recorded, repeats included

} // namespace audit::trail

#pragma once
// Provenance nodes (mcp/policy/provenance.h) kept by the kernel: one fixed-size record per
// admitted request, appended to a ring region created at boot and shared by the bridges, like the
// audit trail. A node once written cannot be changed by anyone; when the ring is full the oldest
// give way (durable storage will keep them later), and a node id says which boot made it, so an
// id from an earlier boot (a restored snapshot's vectors) is told apart from this boot's nodes.
#include <cstdint>

#include <json/writer.h>
#include <mcp/policy/provenance.h>

namespace mcpd {

uint64_t provenance_log_bytes();        // the ring region's size (1 MiB)
uint32_t provenance_log_record_bytes(); // one node's record
// The calling bridge reaches the ring through `region_slot` (the boot grants each bridge one).
bool provenance_log_attach(uint32_t region_slot);
// Keeps the node; returns its id, 0 when it could not be written (the request goes on: its
// decisions are audited without a node, and the failure is counted). A record holds binary
// fields where it can (the time as seconds): the text is made when a node is read, not per request.
uint64_t provenance_log_record(const mcp::ProvenanceNode& node);
// The same through the caller's own slot for the ring (a bridge's, as it attached it, or
// ipc::TaskSlots::kNone), without looking the calling task up at every node.
uint64_t provenance_log_record(const mcp::ProvenanceNode& node, uint32_t region_slot);
// Writes the node `id` and its chain of parents (at most `depth` nodes in all), newest first, as
// the members of an object: "node", "chain". False + why when the node is not held (unknown,
// given way to newer ones, or of another boot).
bool provenance_log_write(json::Writer& w, uint64_t id, uint32_t depth, const char*& why);
uint64_t provenance_log_count();  // nodes written this boot
uint64_t provenance_log_failed(); // nodes that could not be written
uint32_t provenance_boot_tag();   // this boot's tag (the upper half of every id it makes)

} // namespace mcpd

#pragma once
// The cluster's MCP surface (issue 18), shared by its tools (cluster_status, cluster_ping) and the
// cluster://members resource: the membership as the Cluster object reports it, written as JSON.
// Tool bodies read through the capability their token granted; the resource through the bridge's.
#include <cstdint>

#include <json/writer.h>
#include <mcp/server/server.h>

#include <abi/cluster.h>

namespace mcpd {

// cluster://members through the bridge's Cluster capability `cap`.
bool read_cluster_members(uint32_t cap, json::Writer& w, mcp::ToolError& err);
uint64_t cluster_generation(uint32_t cap);
// kernel://status's "consensus" (the group's role, term, leader, commit and, at the leader, each
// replica's lag) through `cap`; false, and nothing written, on a node that runs no member.
bool write_consensus_status(uint32_t cap, json::Writer& w);

namespace tools {

using cluster_abi::ClusterInfo;
using cluster_abi::MemberInfo;

constexpr uint32_t kMaxMembers = 64;
constexpr uint64_t kMs = 1'000'000ull;

void write_address(json::Writer& w, uint32_t ip, uint16_t port);
void write_members(json::Writer& w, const MemberInfo* m, int64_t n);
// A voter replacement's step and failure (cluster_abi::ReplaceStep, ReplaceFailure) as the tools
// name them ("standby", "catch_up_timed_out", ...).
const char* replace_step_name(uint8_t step);
const char* replace_failure_name(uint8_t failure);
// The consensus group's member as `info` reports it (raft_id != 0): its role, term, leader, commit,
// the configuration and, at the leader, each server's match and lag; the fields only (the caller
// opens the object).
void write_consensus(json::Writer& w, const ClusterInfo& info);
// The summary (and up to `max` members) through `cap`; false when the call is refused.
bool read_info(uint32_t cap, ClusterInfo& info, MemberInfo* members, uint32_t max, int64_t& n);

} // namespace tools
} // namespace mcpd

#pragma once
// Cluster membership (issue 18): the kernel's "cluster" task runs the SWIM protocol of
// lib/cluster over a UDP endpoint it opens at run time through its NetStack capability, every
// message authenticated under the cluster key (derived from `cluster_key=`; the secret itself
// is not kept). What it knows is served to tool tasks through the Cluster capability
// (cluster_info, cluster_ping, cluster_ping_result), read under masked IRQs so a reader never
// sees the table half-updated.
#include <cstdint>
#include <span>
#include <string_view>

#include "cluster_abi.h"

namespace composition {
class Objects;
}

namespace clusterd {

// `cluster=` was given (with a key): the task will run.
bool configured();
// Creates the task, which holds what composition.cpp gives it (the NetStack capability, and the
// MCP audit trail, where refused peers are recorded, when there is one); registers the Cluster
// object. Returns the Cluster object's id (0 when not configured or the task failed).
uint64_t start(const composition::Objects& objects);

// --- system call side (IRQs masked) ---
int64_t info(cluster_abi::ClusterInfo* out, cluster_abi::MemberInfo* members, uint32_t max);
int64_t ping(std::string_view name);
int64_t ping_result(uint32_t id, cluster_abi::PingInfo* out);
// Changes whenever any member's state does: the cluster://members resource's revision.
uint64_t generation();
// The protocol runs (the endpoint is open): federated searches can be served.
bool running();
// Wakes the task if it waits for datagrams (a federated search was left for it).
void poke();
// The cluster task's side of a follower's forwarded change (replica_applier.h): an audit record on
// this node (the follower's bridge audited the call itself), proposed or refused.
void audit_forwarded(uint32_t from_ip, std::span<const uint8_t> command, bool proposed);
// What the membership protocol says of the member at `ip` (cluster::State: 0 alive, 1 suspect,
// 2 dead) and for how long; false if it knows no member there.
bool member_state(uint32_t ip, uint8_t& state, uint64_t& for_ns);
// cluster_replace: asks the group's leader here to replace voter `dead` by the member at `with`
// (IPv4 addresses): 0 accepted (its progress in cluster_info's replace_* fields), or -ktl::Error
// (NotLeader, Exists: one runs, NotFound: `with` is no live member, InvalidArgs: `dead` is not a
// voter or `with` is one already, NotReady: no consensus group here).
int64_t replace(uint32_t dead, uint32_t with);
// The lowest address of a member the protocol holds alive (not this node) that `skip` refuses
// not; 0: none.
uint32_t lowest_live_member(bool (*skip)(uint32_t ip));
// The addresses of the members the protocol holds alive (not this node), at most out.size(): their
// number.
size_t live_members(std::span<uint32_t> out);

} // namespace clusterd

#pragma once
// The cluster's consensus group (issue 35; docs/replication.md): with `raft_voters=` (3 or 5
// addresses, the same list on every node), each node whose address is in the list runs one
// member of a Raft group (kernel/raft) with the others, over a UDP endpoint of its own on the
// membership port + 1, every datagram sealed under the cluster key. The group elects a leader and
// keeps it agreed; it carries the cluster's replicated collections (replica_applier.h). Its term, vote and
// log are the node's RaftLog (kernel/raft/raft_store.h: records in the write-ahead log, carried by
// checkpoints): a node restarted with its disk takes its member's state up again; without a disk
// they live in memory and a restarted node joins as new (which only a node that never voted may).
// Run by the cluster task; read by cluster_status through the Cluster capability.
#include <cstdint>
#include <string_view>

#include <abi/cluster.h>
#include <cluster/types.h>

namespace clusterd::consensus {

constexpr uint64_t kRoundNs = 10'000'000;    // the longest the task waits between two turns
constexpr uint64_t kBusyRoundNs = 1'000'000; // while the group works (its disk writes wake nothing)

// Parses raft_voters; when this node (self_ip) is among them, opens its endpoint through the
// NetStack capability and starts its member on the state the RaftLog capability holds for it
// (waiting until recovery has given it back). False: not a voter, or it could not start (logged).
// (factory: the regions a voter exports collections into for another that catches up.)
bool start(uint32_t netstack, uint32_t raft_log, uint32_t store, uint32_t factory, uint32_t self_ip,
           uint16_t membership_port, const cluster::Key& key, uint64_t epoch);
bool running();
// `ip` is one of the addresses raft_voters= names (every node parses the list, voter or not).
bool is_voter(uint32_t ip);
// One round of the cluster task: datagrams in, the member's turn, the status snapshot.
void round();
// How long the task may wait before the next round: short while the group works (the last round
// changed its log, commit or applied count, or changes wait for an answer: the next message is
// likely on its way), kRoundNs when it is quiet (heartbeats only).
uint64_t next_round_ns();
// cluster_replace at this node (a system call: IRQs masked): voter `dead_ip` to be replaced by
// the member at `with_ip` (alive: the caller checked), the next round starts it. 0, or
// -ktl::Error: NotReady (no member here), NotLeader, Exists (one runs), InvalidArgs (`dead_ip` is
// no voter, or this node; `with_ip` is a voter).
int64_t request_replace(uint32_t dead_ip, uint32_t with_ip);
// Whether group 0's directory, as last published here, places collection `name` in a group whose
// voters do not include this node (IRQs masked: a system call's question).
bool placed_elsewhere(std::string_view name);
// The dimension of such a collection as its placement says (0: not placed elsewhere, or placed by
// a kernel whose placements did not say).
uint32_t placed_elsewhere_dim(std::string_view name);
// Reads from outside a group (the cluster task's; federation.h). A linearizable read of replicated
// collection `name` that another node asked this one, a voter of its group, to serve: a read index
// through that group. Its ticket (> 0), or -ktl::Error: NotFound (no placement names this node for
// it), NotVoter (its group's member does not run here yet), NotLeader, WouldBlock.
int64_t peer_read_begin(std::string_view name);
// 0 while it waits, 1 once this node's copy has applied the log up to the read index, or -error.
int64_t peer_read_state(uint64_t ticket);
// The read's asker gave up: its place is freed (its index, if it still comes, is dropped).
void peer_read_cancel(uint64_t ticket);
// The voters group 0's directory (as applied here) names for collection `name`: their count (0:
// not placed), at most `max` written to `out`.
size_t voters_of(std::string_view name, uint32_t* out, size_t max);
// The group's part of cluster_info (IRQs masked).
void fill(cluster_abi::ClusterInfo& out);

} // namespace clusterd::consensus

#pragma once
// Records exchanged with the cluster system calls (cluster_info, cluster_ping_result): plain,
// fixed-size, so a tool task reads the membership without touching the protocol's state.
#include <cstdint>

namespace cluster_abi {

constexpr uint32_t kRaftMaxServers = 8;
struct RaftServer {
    uint64_t id, match;
    uint32_t ip;
    uint8_t role;
    uint8_t reserved[3];
};
// A voter replacement's steps: the newcomer added (a spare), made a standby (replicated to),
// promoted to voter once caught up, the dead voter removed.
enum class ReplaceStep : uint8_t { None, Adding, Standby, Promoting, Removing, Done, Failed };
// Why one failed: this node stopped leading; the engine refused a step (its code says why); the
// newcomer did not catch up with the log in time; the state changed under it (the dead voter no
// longer in the configuration, the newcomer a voter already).
enum class ReplaceFailure : uint8_t { None, LeadershipLost, Refused, CatchUpTimedOut, Changed };

// A replicated collection as group 0's directory places it (lib/raft/directory.h): its group and
// that group's voters (IPv4 addresses, host byte order).
constexpr uint32_t kMaxPlacements = 32;
struct Placement {
    char name[64]; // `name_length` bytes, not NUL-terminated when 64
    uint32_t group;
    uint8_t name_length, voter_count;
    uint8_t reserved[2];
    uint32_t voters[5];
};

// A replicated collection's own group, as this node's member of it knows it.
constexpr uint32_t kMaxGroups = 7; // groups a node is a member of besides group 0
struct GroupInfo {
    uint64_t group, term, commit, last_index;
    uint32_t leader_ip; // 0: none known
    uint8_t role;       // as raft_role
    uint8_t server_count;
    uint8_t reserved[2];
    uint32_t server_ip[5];
    uint8_t server_role[5]; // upstream's: 0 standby, 1 voter, 2 spare
    uint8_t reserved2[3];
    uint64_t server_match[5]; // at the leader: the highest log index known replicated there
    uint64_t applied;         // the collection's changes applied here
    uint64_t snapshot_index, snapshots_taken, snapshots_installed;
};

struct ClusterInfo {
    char self[32];    // this node's name
    char cluster[32]; // the cluster's name
    uint32_t self_ip; // host byte order (0: no address yet)
    uint16_t port;    // the UDP port of the protocol
    uint8_t running;  // 1 once the endpoint is open and the protocol runs
    uint8_t reserved;
    uint32_t incarnation; // ours
    uint32_t members;     // in the table, self included
    uint32_t alive, suspect, dead;
    uint32_t period_ms, ack_timeout_ms, suspicion_ms, indirect;
    uint64_t generation; // changes whenever any member's state does
    uint64_t sent, received, accepted, bad_mac, malformed, replayed, refutations, probes, suspicions, deaths;
    // The UDP endpoint's own: datagrams in and out, and those its rings could not take.
    uint64_t udp_rx, udp_tx, udp_rx_dropped, udp_tx_refused, udp_tx_errors;
    // Refused datagrams that made no audit record, counted here instead: held back by the
    // per-kind limit, or reported beyond this boot's budget of audit records for peers.
    uint64_t refusals_unreported, refusals_unaudited;
    uint64_t wrong_version, table_full, restarts, incarnation_jumps;
    // The cluster's consensus group (`raft_voters=`): this node's member id (0: not a voter, or
    // the group is off), the voters, the term, the leader this member knows (raft id and address;
    // 0: none), its commit index and role, and the group's datagrams.
    uint32_t raft_id, raft_voters;
    uint64_t raft_term, raft_leader, raft_commit;
    uint32_t raft_leader_ip;
    uint8_t raft_role;    // 0 none, 1 follower, 2 candidate, 3 leader
    uint8_t raft_durable; // 1: the member's term, vote and log are on the disk (0: in memory)
    uint8_t raft_removed; // 1: a member of the group told this one it was removed while it was down
    uint8_t raft_reserved;
    uint64_t raft_sent, raft_received, raft_refused;
    // The member's log (its last index), and what it found on the disk when it started (0, 0: new).
    uint64_t raft_last_index, raft_recovered_term, raft_recovered_entries;
    // Its newest snapshot (index and term; 0: none), the entries its log holds behind and after
    // it, and the snapshots taken here and installed from a leader since the member started.
    uint64_t raft_snapshot_index, raft_snapshot_term, raft_log_entries, raft_snapshots_taken, raft_snapshots_installed;
    // The replicated collections' changes: applied here (and failed), proposed here as the leader,
    // refused (not the leader, no room), answered with an unknown outcome, snapshots installed
    // over them.
    uint64_t repl_applied, repl_failed, repl_proposed, repl_refused, repl_timed_out, repl_installs;
    // Changes a follower sent the leader, and changes the leader proposed for followers.
    uint64_t repl_forwarded_out, repl_forwarded_in;
    // Catching up with an installed snapshot (kernel/cluster/state_transfer.h): transfers completed
    // here, the collections and bytes they fetched, times one started over; pages and bytes this
    // voter sent others; 1 while one runs here.
    uint64_t xfer_done, xfer_collections, xfer_bytes, xfer_restarts, xfer_served_pages, xfer_served_bytes;
    uint64_t xfer_active;
    uint64_t xfer_incomplete; // snapshots installed without every collection (logged)
    uint64_t repl_reads;      // linearizable reads of replicated collections answered here (a read index each)
    // Federated searches (kernel/cluster/federation.h): asked here, ended partial, served for
    // other nodes, and datagrams refused (failed authentication or checks).
    uint64_t fed_searches, fed_partial, fed_served, fed_refused;
    // The group's configuration as this member knows it (docs/replication.md): each server's raft
    // id, address, role (upstream's: 0 standby, 1 voter, 2 spare) and, at the leader, the highest
    // log index known replicated there. raft_member: 1 when this node is in it.
    RaftServer raft_servers[kRaftMaxServers];
    uint32_t raft_server_count;
    uint8_t raft_member;
    // The last voter replacement this node ran as the leader (cluster_replace, or automatic):
    // its step (ReplaceStep), why it failed (ReplaceFailure) with the engine's code, the voter
    // replaced and its replacement, how long it ran (or has run so far), how many completed here.
    uint8_t replace_step;
    uint8_t replace_automatic; // 1: started by raft_replace_after_s=
    uint8_t replace_failure;
    uint8_t replace_reserved;
    uint32_t replace_dead_ip, replace_with_ip;
    int32_t replace_code;
    uint64_t replace_ms, replace_done;
    // Rounds of probes this node ran as the leader to confirm reads (one serves every read waiting).
    uint64_t repl_read_rounds;
    // Group 0's directory as this member applied it (a voter of group 0; none elsewhere): every
    // replicated collection's placement, and the next group id it will assign.
    uint32_t placement_count, placement_next_group;
    uint64_t repl_placements; // creates whose placement this node proposed before the create
    uint64_t repl_beacons;    // entries this node's groups' leaders proposed to tell followers a commit at once
    Placement placements[kMaxPlacements];
    // The collections' groups this node runs a member of.
    uint32_t group_count, group_reserved;
    GroupInfo groups[kMaxGroups];
};

struct MemberInfo {
    char name[32];
    uint32_t ip;
    uint16_t port;
    uint8_t state; // cluster::State: 0 alive, 1 suspect, 2 dead
    uint8_t self;  // 1 for this node
    uint32_t incarnation;
    uint32_t reserved;
    uint64_t last_heard_ago_ns; // 0: never heard directly
    uint64_t rtt_ns;            // 0: not measured
    uint64_t state_for_ns;      // time in the current state
};

// A federated search (fed_search): a query for every live node's collection of this name; or
// (mode kFedVoter*) a read of a replicated collection this node holds no copy of, asked of the
// collection's voters, the first to answer serving it (docs/replication.md "Reads from outside a
// group").
enum FedMode : uint8_t {
    kFedEveryNode = 0,         // every live node's own collection, merged (op search only)
    kFedVoterLinearizable = 1, // a voter answers after a read index through the collection's group
    kFedVoterLocal = 2,        // a voter answers from its copy as it is (possibly stale)
};
enum FedOp : uint8_t {
    kFedSearch = 0, // the k nearest to `vector` (dim floats)
    kFedGet = 1,    // the vectors of k ids at `vector` (const uint64_t*), as many as one answer holds
    kFedStats = 2,  // the collection's VectorStats
};
// FedQuery::flags: each hit also names the provenance node of the write that stored it (a read
// from outside only).
constexpr uint8_t kFedWithProvenance = 1;
struct FedQuery {
    char name[65];        // the collection's name (NUL-terminated)
    uint8_t mode;         // FedMode
    uint8_t op;           // FedOp
    uint8_t flags;        // kFedWithProvenance
    uint32_t dim;         // search: floats at `vector`
    uint32_t k, ef;       // search: as vec_search; get: the ids at `vector`
    uint32_t deadline_ms; // answers gathered until then (the nodes still silent are named missing)
    uint64_t vector;      // search: const float*, the query; get: const uint64_t*, the ids
    // A read from outside's search: only these ids (strictly ascending, at most kFedMaxFilter; the
    // query's floats and these together at most kFedMaxInput bytes: one request to a voter).
    uint64_t filter; // const uint64_t*
    uint32_t filter_count;
    uint32_t reserved;
};

constexpr uint32_t kFedMaxK = 100;
constexpr uint32_t kFedMaxNodes = 32;      // nodes asked in one search (self included)
constexpr uint32_t kFedMaxGetIds = 16;     // ids one get asks for
constexpr uint32_t kFedMaxPayload = 18432; // what one answer of a get or stats carries
constexpr uint32_t kFedMaxFilter = 1024;   // filter ids of a search from outside
constexpr uint32_t kFedMaxInput = 16384;   // a request's floats and filter ids together

struct FedHit {
    uint64_t id;
    float distance;
    uint32_t node;       // index into FedResult::nodes: whose copy answered it
    uint64_t provenance; // kFedWithProvenance: the write's provenance node (0: unknown)
};

// One vector of a get's payload: id, provenance node, then the collection's `dim` floats.
struct FedVectorHead {
    uint64_t id;
    uint64_t provenance;
};

// fed_result: the merged top k (ascending distance, each id once), the nodes that answered with a
// collection of that name, those that hold none or one that does not fit the query, and those
// asked that did not answer before the deadline. A read from outside (mode kFedVoter*): the one
// voter that served it (nodes[0], answered 1; 0: none could), and for a get or stats its payload.
struct FedResult {
    uint32_t count, answered, missing, without;
    uint32_t partial;   // 1: some node asked did not answer
    uint32_t confirmed; // 1: served after a read index (kFedVoterLinearizable)
    FedHit hits[kFedMaxK];
    char nodes[kFedMaxNodes][32];         // answered (the first `answered`)
    char missing_nodes[kFedMaxNodes][32]; // did not answer (the first `missing`)
    // get: `count` FedVectorHead + dim floats each, dim in `payload_dim` (ids asked and not among
    // them: not found when `complete`, else not sent yet: ask again); stats: a VectorStats.
    uint32_t payload_bytes, payload_dim;
    uint32_t complete;  // get: every id asked was answered (found or not)
    uint32_t not_found; // get: ids the voter does not hold, their ids in `absent`
    // answered 0: what the last voter to answer said (1 it holds no copy, 2 the query does not
    // fit the collection, 3 it could not confirm the read), 0 when none answered.
    uint32_t refusal;
    uint32_t reserved;
    uint64_t absent[kFedMaxGetIds];
    alignas(8) uint8_t payload[kFedMaxPayload];
};

struct PingInfo {
    uint32_t status; // 0 pending, 1 answered, 2 timed out, 3 unknown id
    uint32_t reserved;
    uint64_t rtt_ns;
};

} // namespace cluster_abi

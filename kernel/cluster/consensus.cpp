#include "consensus.h"

#include "cluster_service.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../log.h"
#include "../net/datagram.h"
#include "../raft/raft_heap.h"
#include "../mm/kheap.h"
#include "../raft/raft_member.h"
#include "consensus_group.h"
#include <abi/sys.h>

#include <netcfg/ipv4_config.h>
#include <raft/log_records.h>

#include <cstring>

#include <new>

namespace clusterd {

// raft_voters=: group 0's first voters, raft ids 1..n in the list's order. Any other node's raft
// id is its IPv4 address (always above kMaxVoters), so every node knows where any id is.
namespace {
uint32_t g_voters[kraft::kMaxVoters] = {};
uint32_t g_voter_count = 0;
} // namespace

uint32_t consensus_ip_of(uint64_t id) {
    if (id >= 1 && id <= g_voter_count)
        return g_voters[id - 1];
    return id > kraft::kMaxVoters && id <= 0xffffffffull ? static_cast<uint32_t>(id) : 0;
}

uint64_t consensus_id_of(uint32_t ip) {
    for (uint32_t i = 0; i < g_voter_count; ++i)
        if (g_voters[i] == ip)
            return i + 1;
    return ip;
}

namespace consensus {
namespace {

constexpr uint64_t kGroup = 0; // the cluster's own group (collections' come later)
// The engine keeps its log's entries in memory: snapshots every kSnapshotThreshold applied changes
// with kSnapshotTrailing kept behind bound it to their sum, each a command of 20 KiB at most
// (with the proposals in flight, 320 x 20 KiB = 6.3 MiB at worst; a budget, not a reservation:
// small changes take little).
constexpr unsigned kSnapshotThreshold = 96, kSnapshotTrailing = 192;
constexpr size_t kEngineHeap = 8u << 20; // what the engine may hold for this node's groups
static_assert((kSnapshotThreshold + kSnapshotTrailing + kraft::kMaxProposals) * (kraft::kMaxCommand + 64) <=
              kEngineHeap);

uint32_t g_slot = ~0u; // the groups' Datagram capability
ConsensusGroup g_group0(kGroup);
// The replicated collections' groups this node is a voter of (group 0's directory names them),
// on the kernel heap while they run: a group's channels are most of its size.
static_assert(cluster_abi::kMaxGroups == raftdir::kMaxGroupsPerNode);
ConsensusGroup* g_groups[cluster_abi::kMaxGroups] = {};
ConsensusGroup::Config g_config; // group 0's: a collection's group differs in its id and voters
uint32_t g_self_ip = 0;
uint64_t g_directory_seen = ~0ull;
uint64_t g_join_again_ns = 0; // a member that could not start is tried again then (0: none waits)
bool route(uint32_t group, ReplicaApplier::Route& out);
void dropped(uint32_t group, std::string_view name, uint64_t ticket, int64_t result);

// `raft_voters=A.B.C.D,...`: 3 or 5 addresses, none twice. 0 when absent or malformed (logged).
uint32_t parse_voters(std::string_view list) {
    uint32_t n = 0;
    while (!list.empty()) {
        const size_t comma = list.find(',');
        const std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        auto ip = netcfg::parse_ipv4(item);
        if (!ip || n == kraft::kMaxVoters)
            return 0;
        for (uint32_t i = 0; i < n; ++i)
            if (g_voters[i] == *ip)
                return 0;
        g_voters[n++] = *ip;
    }
    return n == 3 || n == 5 ? n : 0;
}

} // namespace

bool start(uint32_t netstack, uint32_t raft_log, uint32_t store, uint32_t factory, uint32_t self_ip,
           uint16_t membership_port, const cluster::Key& key, uint64_t epoch) {
    const std::string_view list = bootargs::get().raft_voters;
    if (list.empty())
        return false;
    g_voter_count = parse_voters(list);
    if (g_voter_count == 0) {
        KLOG_ERROR("cluster: raft_voters= takes 3 or 5 distinct IPv4 addresses: the consensus group is off");
        return false;
    }
    // A node the list does not name runs a member too: it bootstraps nothing and stays passive
    // until a leader adds it in a voter's place (cluster_replace); a node that was a member takes
    // its state up from its disk, in or out of the list.
    const uint64_t id = consensus_id_of(self_ip);
    if (id == self_ip && self_ip <= kraft::kMaxVoters)
        return false;
    const uint16_t port = static_cast<uint16_t>(membership_port + 1);
    const int64_t slot = sys::udp_open(netstack, port);
    if (slot < 0) {
        KLOG_ERROR("cluster: cannot open UDP port %u for the consensus group: %s", port,
                   ktl::error_name(static_cast<ktl::Error>(-slot)));
        return false;
    }
    g_slot = static_cast<uint32_t>(slot);
    // The member's state is given back by recovery's first pass (with the audit trail).
    sys::storage_wait();
    kraft::heap_install(kEngineHeap);
    uint64_t voters[kraft::kMaxVoters];
    for (uint32_t i = 0; i < g_voter_count; ++i)
        voters[i] = i + 1;
    const uint32_t bootstrap = id <= g_voter_count ? g_voter_count : 0;
    ConsensusGroup::Config c;
    c.self_id = id;
    c.bootstrap = { voters, bootstrap };
    c.voter_count = g_voter_count;
    // The origin names this node's changes in the group's log, in this boot only (a ticket of an
    // earlier boot, applied again after a restart, must not answer a caller of this one).
    c.origin = (uint64_t(self_ip) << 32) | (epoch & 0xffffffffu);
    c.epoch = epoch;
    c.slot = g_slot;
    c.port = port;
    c.key = &key;
    c.raft_log = raft_log;
    c.store = store;
    c.factory = factory;
    // (raft_snapshot_every= lowers both: bootargs bounds it by kSnapshotThreshold.)
    const unsigned every = bootargs::get().raft_snapshot_every;
    c.snapshot_every = every <= kSnapshotThreshold ? every : kSnapshotThreshold;
    c.snapshot_trailing = every <= kSnapshotThreshold ? 2 * every : kSnapshotTrailing;
    c.router = bootargs::get().raft_groups ? route : nullptr;
    g_config = c;
    g_config.bootstrap = {};
    g_self_ip = self_ip;
    if (!g_group0.start(c))
        return false;
    if (const uint64_t term = g_group0.recovered_term())
        KLOG_INFO("cluster: consensus group member %llu of %u on UDP %u, its state recovered (term %llu, %llu entries)",
                  static_cast<unsigned long long>(id), g_voter_count, port, static_cast<unsigned long long>(term),
                  static_cast<unsigned long long>(g_group0.recovered_entries()));
    else if (bootstrap)
        KLOG_INFO("cluster: consensus group member %llu of %u on UDP %u", static_cast<unsigned long long>(id),
                  g_voter_count, port);
    else
        KLOG_INFO("cluster: not among raft_voters: a spare of the consensus group on UDP %u (a voter's replacement "
                  "when the leader adds it)",
                  port);
    return true;
}

bool running() { return g_group0.running(); }

uint64_t next_round_ns() {
    bool busy = g_group0.busy();
    for (const ConsensusGroup* g : g_groups)
        busy = busy || (g && g->busy());
    return busy ? kBusyRoundNs : kRoundNs;
}

namespace {

bool route(uint32_t group, ReplicaApplier::Route& out) {
    for (ConsensusGroup* g : g_groups)
        if (g && g->id() == group)
            return g->route(out);
    return false;
}

void dropped(uint32_t group, std::string_view name, uint64_t ticket, int64_t result) {
    g_group0.forget_later(group, name, ticket, result);
}

bool tell(uint32_t ip, std::span<const uint8_t> message) { return g_group0.tell(ip, message); }

// A member of group `e.group` with its voters (raft ids there are addresses): from the state the
// RaftLog holds for it, or bootstrapping it as every voter of a new group does.
void join(const raftdir::Entry& e) {
    size_t free_slot = cluster_abi::kMaxGroups;
    for (size_t i = 0; i < cluster_abi::kMaxGroups; ++i)
        if (!g_groups[i] && free_slot == cluster_abi::kMaxGroups)
            free_slot = i;
    if (free_slot == cluster_abi::kMaxGroups)
        return; // (the directory places a node in kMaxGroupsPerNode groups at most)
    auto mem = kheap::alloc(sizeof(ConsensusGroup));
    if (!mem) {
        KLOG_ERROR("cluster: no memory for group %u's member ('%.*s'): tried again in a second", e.group,
                   int(e.name_length), e.name);
        g_join_again_ns = sys::clock() + 1'000'000'000ull;
        return;
    }
    auto* group = new (*mem) ConsensusGroup(e.group);
    uint64_t voters[raftdir::kMaxVoters];
    for (uint8_t i = 0; i < e.voter_count; ++i)
        voters[i] = e.voters[i];
    ConsensusGroup::Config c = g_config;
    c.self_id = g_self_ip;
    // The first voters bootstrap the group; one named in a dead voter's place joins it as it runs
    // (its leader adds it: follow_placement).
    c.bootstrap = { voters, e.reassigned == 0 ? e.voter_count : uint8_t(0) };
    c.voter_count = e.voter_count;
    c.collection = e.name_view();
    c.router = nullptr;
    c.dropped = dropped;
    c.teller = tell;
    // The node that created the collection (the placement's first voter) leads its group while it
    // is up: its caller's changes and reads skip a hop (a follower's change waits ~60 ms, the
    // leader's 6: docs/benchmarks.md).
    c.stand_first = e.voter_count != 0 && e.voters[0] == g_self_ip;
    if (!group->start(c)) { // (logged)
        group->~ConsensusGroup();
        kheap::free(group);
        g_join_again_ns = sys::clock() + 1'000'000'000ull;
        return;
    }
    {
        arch::IrqGuard guard; // cluster_info reads the table
        g_groups[free_slot] = group;
    }
    KLOG_INFO("cluster: a voter of group %u ('%.*s', %u voters)%s", e.group, int(e.name_length), e.name, e.voter_count,
              group->recovered_term() ? ", its state recovered" : "");
}

void drop(size_t slot) {
    ConsensusGroup* group = g_groups[slot];
    {
        arch::IrqGuard guard;
        g_groups[slot] = nullptr;
    }
    KLOG_INFO("cluster: no longer a voter of group %llu: its member and its state here are gone",
              static_cast<unsigned long long>(group->id()));
    group->leave();
    // Its copy here goes too: the placement is gone only once the group applied the drop (a voter
    // that had not applied it yet would keep a collection nobody replicates), or this node's place
    // was given to another.
    const std::string_view name = group->collection();
    const int64_t r = bootargs::get().raft_groups ? sys::store_drop(g_config.store, name.data(), name.size()) : 0;
    if (r < 0 && r != -static_cast<int64_t>(ktl::Error::NotFound))
        KLOG_WARN("cluster: replicated collection '%.*s' left here: %s", int(name.size()), name.data(),
                  ktl::error_name(static_cast<ktl::Error>(-r)));
    group->~ConsensusGroup();
    kheap::free(group);
}

// A replicated collection this node holds a copy of while the directory places it on other nodes
// only: this node's place in its group was given to another while it was down. The copy goes
// (its reads and changes go to the collection's voters from here on) and so does the group's state
// in the RaftLog. False when the store could not list or drop now (tried again a second later).
bool drop_stale_copies() {
    // Only at a node outside group 0's voters, by a directory its leader told it: a voter of group 0
    // is never displaced from a collection's group (a voter is replaced there only after group 0
    // replaced it), and its own directory may be behind for a while after a restart (a snapshot's,
    // until its leader commits in its term), where a placement could still name the node it replaced.
    if (!bootargs::get().raft_groups || !g_group0.told_directory())
        return true; // (with raft_groups=0 every replicated collection lives in group 0)
    static abi::StoreEntry rows[abi::kMaxNamed];
    const int64_t n = sys::store_list(g_config.store, rows, abi::kMaxNamed);
    if (n < 0)
        return false;
    bool done = true;
    for (int64_t i = 0; i < n; ++i) {
        const std::string_view name(rows[i].name, strnlen(rows[i].name, sizeof rows[i].name));
        const raftdir::Entry* e = rows[i].replicated ? g_group0.directory().find(name) : nullptr;
        bool member = false;
        for (const ConsensusGroup* g : g_groups)
            member = member || (g && e && g->id() == e->group);
        if (!e || e->has_voter(g_self_ip) || member)
            continue;
        const int64_t r = sys::store_drop(g_config.store, name.data(), name.size());
        if (r < 0 && r != -static_cast<int64_t>(ktl::Error::NotFound)) {
            done = false; // (busy: a checkpoint, a request in flight)
            continue;
        }
        std::byte record[raftlog::kForgetBytes];
        const auto bytes = raftlog::encode_forget(record, e->group);
        if (bytes)
            (void)sys::raft_write(g_config.raft_log, static_cast<uint64_t>(raftlog::Kind::Forget), record, *bytes);
        KLOG_INFO("cluster: replicated collection '%.*s' is held by other nodes only (this node was replaced in its "
                  "group while down): its copy here is dropped",
                  int(name.size()), name.data());
    }
    return done;
}

// The groups this node runs follow the directory as group 0 has applied it here: a placement that
// names this node is joined, a group it no longer names (forgotten, or its place reassigned) is left.
void follow_directory() {
    const bool again = g_join_again_ns != 0 && static_cast<uint64_t>(sys::clock()) >= g_join_again_ns;
    if (g_group0.directory_changes() == g_directory_seen && !again)
        return;
    g_directory_seen = g_group0.directory_changes();
    g_join_again_ns = 0;
    const raftdir::Directory& dir = g_group0.directory();
    for (size_t i = 0; i < cluster_abi::kMaxGroups; ++i)
        if (g_groups[i]) {
            const raftdir::Entry* e = dir.find_group(static_cast<uint32_t>(g_groups[i]->id()));
            if (!e || !e->has_voter(g_self_ip))
                drop(i);
        }
    const raftdir::Entry* mine[raftdir::kMaxGroupsPerNode];
    const size_t n = dir.groups_of(g_self_ip, mine);
    for (size_t k = 0; k < n; ++k) {
        bool running = false;
        for (const ConsensusGroup* g : g_groups)
            running = running || (g && g->id() == mine[k]->group);
        if (!running)
            join(*mine[k]);
    }
    if (!drop_stale_copies() && g_join_again_ns == 0)
        g_join_again_ns = sys::clock() + 1'000'000'000ull;
}

} // namespace

bool is_voter(uint32_t ip) {
    arch::IrqGuard guard; // (the cluster task's last round)
    return g_group0.is_voter(consensus_id_of(ip));
}

void round() {
    if (!g_group0.running())
        return;
    static uint8_t buf[net::Datagram::kMaxPayload];
    // A bounded batch per round: a flood cannot starve the member's timers.
    for (uint32_t i = 0; i < net::Datagram::kRxSlots; ++i) {
        net::DatagramFrom from {};
        const int64_t n = sys::udp_recv(g_slot, buf, sizeof buf, &from);
        if (n == -static_cast<int64_t>(ktl::Error::Truncated))
            continue;
        if (n < 0)
            break;
        const std::span<const uint8_t> datagram(buf, static_cast<size_t>(n));
        const uint64_t wire_group = raftwire::peek_group(datagram);
        ConsensusGroup* to = &g_group0; // (whatever no group owns: group 0's member refuses it)
        for (ConsensusGroup* g : g_groups)
            if (g && g->owns(wire_group))
                to = g;
        to->receive(wire_group, datagram);
    }
    g_group0.turn();
    follow_directory();
    const uint64_t now = sys::clock();
    for (ConsensusGroup* g : g_groups)
        if (g) {
            g->turn();
            if (const raftdir::Entry* e = g_group0.directory().find_group(static_cast<uint32_t>(g->id())))
                g->follow_placement(*e, now);
        }
}

int64_t request_replace(uint32_t dead_ip, uint32_t with_ip) {
    arch::IrqGuard guard;
    return g_group0.request_replace(dead_ip, with_ip);
}

bool placed_elsewhere(std::string_view name) {
    const raftdir::Entry* e = g_self_ip ? g_group0.published_directory().find(name) : nullptr;
    return e && !e->has_voter(g_self_ip);
}

uint32_t placed_elsewhere_dim(std::string_view name) {
    const raftdir::Entry* e = g_self_ip ? g_group0.published_directory().find(name) : nullptr;
    return e && !e->has_voter(g_self_ip) ? e->dim : 0;
}

namespace {
// A collection's placement in the directory this node routes by (none while group 0 does not run).
const raftdir::Entry* placement(std::string_view name) {
    return g_group0.running() ? g_group0.directory().find(name) : nullptr;
}
} // namespace

int64_t peer_read_begin(std::string_view name) {
    const raftdir::Entry* e = placement(name);
    if (!e || !e->has_voter(g_self_ip))
        return -static_cast<int64_t>(ktl::Error::NotFound);
    ReplicaApplier::Route r {};
    if (!route(e->group, r))
        return -static_cast<int64_t>(ktl::Error::NotVoter);
    auto ticket = r.applier->peer_read(*r.member, *r.forwarder, name, sys::clock());
    return ticket ? static_cast<int64_t>(*ticket) : -static_cast<int64_t>(ticket.error());
}

int64_t peer_read_state(uint64_t ticket) { return ReplicaApplier::peer_read_state(ticket); }

void peer_read_cancel(uint64_t ticket) { ReplicaApplier::peer_read_cancel(ticket); }

size_t voters_of(std::string_view name, uint32_t* out, size_t max) {
    const raftdir::Entry* e = placement(name);
    if (!e)
        return 0;
    for (uint8_t i = 0; i < e->voter_count && i < max; ++i)
        out[i] = e->voters[i];
    return e->voter_count;
}

void fill(cluster_abi::ClusterInfo& out) {
    g_group0.fill(out);
    for (const ConsensusGroup* g : g_groups)
        if (g && out.group_count < cluster_abi::kMaxGroups) {
            g->fill(out.groups[out.group_count++]);
            g->add_counters(out); // (consensus.replication counts every group's)
        }
}

} // namespace consensus
} // namespace clusterd

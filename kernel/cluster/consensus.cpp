#include "consensus.h"

#include "cluster_service.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../log.h"
#include "../net/datagram.h"
#include "../raft/raft_heap.h"
#include "../raft/raft_member.h"
#include "consensus_group.h"
#include <abi/sys.h>

#include <netcfg/ipv4_config.h>

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

uint64_t next_round_ns() { return g_group0.busy() ? kBusyRoundNs : kRoundNs; }

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
        g_group0.receive(raftwire::peek_group(datagram), datagram);
    }
    g_group0.turn();
}

int64_t request_replace(uint32_t dead_ip, uint32_t with_ip) {
    arch::IrqGuard guard;
    return g_group0.request_replace(dead_ip, with_ip);
}

void fill(cluster_abi::ClusterInfo& out) { g_group0.fill(out); }

} // namespace consensus
} // namespace clusterd

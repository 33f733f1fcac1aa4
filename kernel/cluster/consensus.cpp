#include "consensus.h"

#include "cluster_service.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../log.h"
#include "../net/datagram.h"
#include "../raft/raft_heap.h"
#include "../raft/raft_member.h"
#include "replica_applier.h"
#include "voter_replacement.h"
#include <abi/sys.h>

#include <netcfg/ipv4_config.h>

#include <new>

namespace clusterd::consensus {
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

// raft_voters=: the group's first voters, raft ids 1..n in the list's order. Any other node's raft
// id is its IPv4 address (always above kMaxVoters), so every node knows where any id is.
uint32_t g_voters[kraft::kMaxVoters] = {};
uint32_t g_voter_count = 0;
uint64_t g_self_id = 0;
uint64_t g_origin = 0;
bool g_serving_as_voter = false; // what the store was last told (repl_serve)
uint32_t g_slot = ~0u;           // the group's Datagram capability
uint16_t g_port = 0;
cluster::Key g_key {};
alignas(kraft::Member) unsigned char g_member_storage[sizeof(kraft::Member)];
kraft::Member* g_member = nullptr;
kraft::MemberStatus g_status {}; // the last round's, for cluster_info (IRQs masked)
ReplicaApplier g_applier;
PeerChannel g_forwarder(ReplicaApplier::kForwardGroup);
PeerChannel g_transfer_channel(StateTransfer::kGroup);
StateTransfer g_transfer;
ReplicaApplier::Counters g_replication {}; // the last round's, likewise
StateTransfer::Counters g_transfers {};
bool g_transfer_active = false;
bool g_busy = false; // work was seen within kBusyWindowNs
uint64_t g_busy_until = 0;
constexpr uint64_t kBusyWindowNs = 100'000'000;

uint32_t ip_of(uint64_t id) {
    if (id >= 1 && id <= g_voter_count)
        return g_voters[id - 1];
    return id > kraft::kMaxVoters && id <= 0xffffffffull ? static_cast<uint32_t>(id) : 0;
}

uint64_t id_of(uint32_t ip) {
    for (uint32_t i = 0; i < g_voter_count; ++i)
        if (g_voters[i] == ip)
            return i + 1;
    return ip;
}

struct UdpLink final : kraft::Link {
    void send(uint64_t to, std::span<const uint8_t> d) override {
        if (const uint32_t ip = ip_of(to))
            sys::udp_send(g_slot, ip, g_port, d.data(), d.size());
    }
};
UdpLink g_link;

uint32_t g_raft_log = ~0u; // the RaftLog capability

struct LogDisk final : kraft::Disk {
    static constexpr int64_t kWouldBlock = -static_cast<int64_t>(ktl::Error::WouldBlock);
    static constexpr uint64_t kPollNs = 1'000'000;
    static constexpr uint32_t kMaxPolls = 60'000; // a minute of checkpoint: longer, the write fails

    int64_t write(raftlog::Kind kind, std::span<const std::byte> payload) override {
        // A checkpoint holds writes back while it is taken: the member waits it out.
        for (uint32_t i = 0; i < kMaxPolls; ++i) {
            const int64_t r = sys::raft_write(g_raft_log, static_cast<uint64_t>(kind), payload.data(), payload.size());
            if (r > 0)
                logged = true; // a commit carries it: the records are on a disk
            if (r != kWouldBlock)
                return r;
            sys::sleep(kPollNs);
        }
        return -static_cast<int64_t>(ktl::Error::TimedOut);
    }
    int64_t durable(uint64_t ticket) override { return sys::storage_durable(ticket); }
    // Polled rather than storage_sync: a record staged while the store is still recovered becomes
    // durable when the log opens, which storage_sync does not wait for. Until it is durable or the
    // journal has failed (a staged record that is not yet durable is no failure: it will be, and
    // the member must not act as if it were not written).
    bool wait(uint64_t ticket) override {
        for (;;) {
            const int64_t d = sys::storage_durable(ticket);
            if (d != 0)
                return d == 1;
            sys::sleep(kPollNs);
        }
    }
    int64_t load(uint64_t group, std::span<std::byte> out, uint64_t offset) override {
        return sys::raft_read(g_raft_log, group, out.data(), out.size(), offset);
    }
    bool logged = false;
};
LogDisk g_disk;

VoterReplacement g_replace;
VoterReplacement::Status g_replace_status {}; // the last round's (IRQs masked)
struct ReplaceRequest {
    uint32_t dead_ip, with_ip;
    bool pending;
};
ReplaceRequest g_request {}; // left by a tool's system call, taken by the next round (IRQs masked)
uint64_t g_next_automatic_ns = 0;
uint64_t g_round_ns = 0;                                  // when the last round ended (IRQs masked)
constexpr uint64_t kAutomaticRetryNs = 30'000'000'000ull; // after an automatic attempt failed

bool in_configuration(uint32_t ip) { return g_status.server(id_of(ip)) != nullptr; }

// A voter removed while it was down asks for votes forever: whoever it asks tells it so.
void tell_removed() {
    const uint64_t outsider = g_member->take_outsider();
    if (outsider == 0)
        return;
    uint8_t notice[raftread::kMessageBytes];
    const size_t n = raftread::encode({ raftread::kRemoved, 0, g_member->status().term, 0 }, notice);
    (void)g_forwarder.send(outsider, { notice, n });
}

void removed(uint64_t from, uint64_t term) {
    const bool before = g_member->status().removed;
    g_member->set_removed(term);
    if (before || !g_member->status().removed)
        return;
    char teller[16];
    (void)netcfg::format_ipv4(ip_of(from), teller, sizeof teller);
    KLOG_WARN("cluster: %s says this node was removed from the consensus group (replaced while it was down): it no "
              "longer votes or serves replicated collections (cluster_status: consensus.removed)",
              teller);
}

// What the configuration says this round: the voters a catch-up fetches from, and whether the
// store takes replicated changes here (a voter's applier) or refuses them as if no group ran.
void follow_configuration(const kraft::MemberStatus& s) {
    uint64_t voters[kraft::kMaxServers];
    uint32_t n = 0;
    bool voter = false;
    for (uint8_t i = 0; i < s.server_count; ++i)
        if (s.servers[i].role == RAFT_VOTER) {
            voters[n++] = s.servers[i].id;
            voter = voter || (s.servers[i].id == g_self_id && !s.removed);
        }
    g_transfer.set_sources({ voters, n });
    if (voter != g_serving_as_voter && sys::repl_serve(g_raft_log, voter ? g_voter_count : 0, g_origin) == 0) {
        g_serving_as_voter = voter;
        KLOG_INFO("cluster: this node is %s of the consensus group", voter ? "a voter" : "no longer a voter");
    }
}

// raft_replace_after_s=: at the leader, a voter the membership protocol has held dead that long is
// replaced by the lowest-addressed live member outside the configuration.
void replace_automatically(const kraft::MemberStatus& s, uint64_t now) {
    const uint32_t after_s = bootargs::get().raft_replace_after_s;
    if (after_s == 0 || !s.is_leader || g_replace.active() || now < g_next_automatic_ns)
        return;
    for (uint8_t i = 0; i < s.server_count; ++i) {
        const uint32_t ip = ip_of(s.servers[i].id);
        uint8_t state = 0;
        uint64_t for_ns = 0;
        if (s.servers[i].role != RAFT_VOTER || s.servers[i].id == g_self_id || !member_state(ip, state, for_ns) ||
            state != 2 || for_ns < uint64_t(after_s) * 1'000'000'000ull)
            continue;
        const uint32_t with = lowest_live_member(in_configuration);
        if (with == 0)
            return; // (nobody to take its place: asked again next round)
        g_replace.start(s.servers[i].id, id_of(with), ip, with, true, now);
        g_next_automatic_ns = now + kAutomaticRetryNs;
        return;
    }
}

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
    const uint64_t id = id_of(self_ip);
    if (id == self_ip && self_ip <= kraft::kMaxVoters)
        return false;
    g_port = static_cast<uint16_t>(membership_port + 1);
    const int64_t slot = sys::udp_open(netstack, g_port);
    if (slot < 0) {
        KLOG_ERROR("cluster: cannot open UDP port %u for the consensus group: %s", g_port,
                   ktl::error_name(static_cast<ktl::Error>(-slot)));
        return false;
    }
    g_slot = static_cast<uint32_t>(slot);
    g_key = key;
    g_raft_log = raft_log;
    // The member's state is given back by recovery's first pass (with the audit trail).
    sys::storage_wait();
    kraft::heap_install(kEngineHeap);
    uint64_t voters[kraft::kMaxVoters];
    for (uint32_t i = 0; i < g_voter_count; ++i)
        voters[i] = i + 1;
    const uint32_t bootstrap = id <= g_voter_count ? g_voter_count : 0;
    auto* member = new (g_member_storage) kraft::Member;
    member->set_state_machine(&g_applier);
    // (raft_snapshot_every= lowers both: bootargs bounds it by kSnapshotThreshold.)
    const unsigned every = bootargs::get().raft_snapshot_every;
    (void)member->set_snapshot_policy(every <= kSnapshotThreshold ? every : kSnapshotThreshold,
                                      every <= kSnapshotThreshold ? 2 * every : kSnapshotTrailing);
    if (!member->start(kGroup, id, { voters, bootstrap }, g_link, g_disk, { g_key.data(), g_key.size() }, epoch)) {
        member->~Member();
        KLOG_ERROR("cluster: the consensus group's member did not start");
        return false;
    }
    {
        arch::IrqGuard guard; // cluster_info reads it
        g_member = member;
    }
    // The origin names this node's changes in the group's log, in this boot only (a ticket of an
    // earlier boot, applied again after a restart, must not answer a caller of this one).
    g_origin = (uint64_t(self_ip) << 32) | (epoch & 0xffffffffu);
    g_self_id = id;
    const raftwire::Key wire_key { g_key.data(), g_key.size() };
    g_transfer.start(store, factory, g_transfer_channel, id);
    // The store takes replicated changes here only while this node is a voter (serve_as_voter).
    if (store == ~0u || factory == ~0u || !g_applier.start(store, raft_log, 0, g_origin, g_transfer) ||
        !g_forwarder.start(g_slot, g_port, ip_of, id, wire_key, epoch) ||
        !g_transfer_channel.start(g_slot, g_port, ip_of, id, wire_key, epoch))
        KLOG_ERROR("cluster: replicated collections are off here (no store, or the applier did not register)");
    if (member->recovered_term())
        KLOG_INFO("cluster: consensus group member %llu of %u on UDP %u, its state recovered (term %llu, %llu entries)",
                  static_cast<unsigned long long>(id), g_voter_count, g_port,
                  static_cast<unsigned long long>(member->recovered_term()),
                  static_cast<unsigned long long>(member->recovered_entries()));
    else if (bootstrap)
        KLOG_INFO("cluster: consensus group member %llu of %u on UDP %u", static_cast<unsigned long long>(id),
                  g_voter_count, g_port);
    else
        KLOG_INFO("cluster: not among raft_voters: a spare of the consensus group on UDP %u (a voter's replacement "
                  "when the leader adds it)",
                  g_port);
    return true;
}

bool running() { return g_member != nullptr; }

uint64_t next_round_ns() { return g_busy ? kBusyRoundNs : kRoundNs; }

bool is_voter(uint32_t ip) {
    const uint64_t id = id_of(ip);
    arch::IrqGuard guard; // (g_status: the cluster task's last round)
    for (uint8_t i = 0; i < g_status.server_count; ++i)
        if (g_status.servers[i].id == id && g_status.servers[i].role == RAFT_VOTER)
            return true;
    return false;
}

void round() {
    if (!g_member)
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
        std::span<const uint8_t> message;
        uint64_t sender = 0;
        const uint64_t group = raftwire::peek_group(datagram);
        if (group == g_forwarder.group()) {
            if (!g_forwarder.receive(datagram, message, sender))
                continue;
            if (raftread::is_read_message(message)) {
                // (One that does not add up is dropped: refused, as the applier counts it.)
                if (const auto m = raftread::decode(message); m && m->type == raftread::kRemoved)
                    removed(sender, m->a);
                else
                    g_applier.read_message(*g_member, g_forwarder, m, sender);
            } else {
                const bool proposed = g_applier.forwarded(*g_member, message);
                audit_forwarded(ip_of(sender), message, proposed);
            }
        } else if (group == g_transfer_channel.group()) {
            if (g_transfer_channel.receive(datagram, message, sender))
                g_transfer.received(message, sender, g_member->status(), sys::clock());
        } else {
            g_member->receive(datagram);
        }
    }
    g_member->turn();
    tell_removed();
    const uint64_t now = sys::clock();
    g_transfer.pump(now);
    g_applier.pump(*g_member, g_forwarder, now);
    kraft::MemberStatus s = g_member->status();
    follow_configuration(s);
    ReplaceRequest request;
    {
        arch::IrqGuard guard;
        request = g_request;
        g_request.pending = false;
    }
    if (request.pending)
        (void)g_replace.start(id_of(request.dead_ip), id_of(request.with_ip), request.dead_ip, request.with_ip, false,
                              now);
    replace_automatically(s, now);
    g_replace.step(*g_member, s, now);
    s = g_member->status();
    // Work (the log, the commit or the applied count moved, or changes wait for an answer) keeps the
    // rounds short for a while after it: the messages of one commit's round trips follow each
    // other. Heartbeats alone are not work: an idle group keeps the slow rounds.
    const uint64_t now_ns = sys::clock();
    if (s.last_index != g_status.last_index || s.commit != g_status.commit || s.applied != g_status.applied ||
        g_applier.in_flight() || g_transfer.active())
        g_busy_until = now_ns + kBusyWindowNs;
    g_busy = now_ns < g_busy_until;
    const ReplicaApplier::Counters c = g_applier.counters();
    const StateTransfer::Counters t = g_transfer.counters();
    arch::IrqGuard guard;
    g_status = s;
    g_replication = c;
    g_transfers = t;
    g_transfer_active = g_transfer.active() || s.installing;
    g_replace_status = g_replace.status();
    g_round_ns = now_ns;
}

int64_t request_replace(uint32_t dead_ip, uint32_t with_ip) {
    arch::IrqGuard guard;
    if (!g_member)
        return -static_cast<int64_t>(ktl::Error::NotReady);
    if (!g_status.is_leader)
        return -static_cast<int64_t>(ktl::Error::NotLeader);
    if (g_request.pending || g_replace_status.active())
        return -static_cast<int64_t>(ktl::Error::Exists);
    const auto* dead = g_status.server(id_of(dead_ip));
    const auto* with = g_status.server(id_of(with_ip));
    if (!dead || dead->role != RAFT_VOTER || dead->id == g_self_id || (with && with->role == RAFT_VOTER))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    g_request = ReplaceRequest { dead_ip, with_ip, true };
    return 0;
}

void fill(cluster_abi::ClusterInfo& out) {
    if (!g_member)
        return;
    const kraft::MemberStatus& s = g_status;
    out.raft_id = static_cast<uint32_t>(s.id);
    out.raft_voters = g_voter_count; // (the group's size: a replacement keeps it)
    out.raft_term = s.term;
    out.raft_leader = s.leader;
    out.raft_leader_ip = ip_of(s.leader);
    out.raft_commit = s.commit;
    out.raft_role = s.role;
    out.raft_sent = s.sent;
    out.raft_received = s.received;
    out.raft_refused = s.refused;
    // (A member that found state found it on a disk; a new one wrote its first records to one.)
    out.raft_durable = g_disk.logged || g_member->recovered_term() ? 1 : 0;
    out.raft_last_index = s.last_index;
    out.raft_recovered_term = g_member->recovered_term();
    out.raft_recovered_entries = g_member->recovered_entries();
    out.raft_snapshot_index = s.snapshot_index;
    out.raft_snapshot_term = s.snapshot_term;
    out.raft_log_entries = s.entries;
    out.raft_snapshots_taken = s.snapshots_taken;
    out.raft_snapshots_installed = s.snapshots_installed;
    const ReplicaApplier::Counters& c = g_replication;
    out.repl_applied = c.applied;
    out.repl_failed = c.failed;
    out.repl_proposed = c.proposed;
    out.repl_refused = c.refused;
    out.repl_timed_out = c.timed_out;
    out.repl_installs = c.installs;
    out.repl_forwarded_out = c.forwarded_out;
    out.repl_forwarded_in = c.forwarded_in;
    out.repl_reads = c.reads;
    out.repl_read_rounds = c.read_rounds;
    out.raft_server_count = s.server_count;
    out.raft_member = s.member ? 1 : 0;
    out.raft_removed = s.removed ? 1 : 0;
    for (uint8_t i = 0; i < s.server_count && i < cluster_abi::kRaftMaxServers; ++i) {
        out.raft_servers[i].id = s.servers[i].id;
        out.raft_servers[i].match = s.servers[i].match;
        out.raft_servers[i].ip = ip_of(s.servers[i].id);
        out.raft_servers[i].role = s.servers[i].role;
    }
    g_replace_status.fill(out, g_round_ns);
    const StateTransfer::Counters& t = g_transfers;
    out.xfer_done = t.transfers;
    out.xfer_collections = t.collections;
    out.xfer_bytes = t.bytes;
    out.xfer_restarts = t.restarts;
    out.xfer_incomplete = t.incomplete;
    out.xfer_served_pages = t.served_pages;
    out.xfer_served_bytes = t.served_bytes;
    out.xfer_active = g_transfer_active ? 1 : 0;
}

} // namespace clusterd::consensus

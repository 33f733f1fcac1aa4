#include "consensus_group.h"

#include "cluster_service.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../log.h"
#include <abi/sys.h>

#include <netcfg/ipv4_config.h>
#include <raft/log_records.h>
#include <raft/outcome.h>
#include <raft/read_index.h>

#include <cstring>
#include <new>

namespace clusterd {
namespace {

constexpr uint64_t kPollNs = 1'000'000; // the RaftLog's waits: a checkpoint, a commit
constexpr uint64_t kBusyWindowNs = 100'000'000;
constexpr uint64_t kAutomaticRetryNs = 30'000'000'000ull; // after an automatic attempt failed
constexpr uint64_t kNoticeEveryNs = 2'000'000'000ull;     // the directory told again, changed or not

} // namespace

void ConsensusGroup::UdpLink::send(uint64_t to, std::span<const uint8_t> d) {
    if (const uint32_t ip = consensus_ip_of(to))
        sys::udp_send(slot, ip, port, d.data(), d.size());
}

// A checkpoint holds writes back while it is taken: the member waits it out (a minute at most,
// then the write fails).
int64_t ConsensusGroup::LogDisk::write(raftlog::Kind kind, std::span<const std::byte> payload) {
    constexpr int64_t kWouldBlock = -static_cast<int64_t>(ktl::Error::WouldBlock);
    constexpr uint32_t kMaxPolls = 60'000;
    for (uint32_t i = 0; i < kMaxPolls; ++i) {
        const int64_t r = sys::raft_write(raft_log, static_cast<uint64_t>(kind), payload.data(), payload.size());
        if (r > 0)
            logged = true;
        if (r != kWouldBlock)
            return r;
        sys::sleep(kPollNs);
    }
    return -static_cast<int64_t>(ktl::Error::TimedOut);
}

int64_t ConsensusGroup::LogDisk::durable(uint64_t ticket) { return sys::storage_durable(ticket); }

// Polled rather than storage_sync: a record staged while the store is still recovered becomes
// durable when the log opens, which storage_sync does not wait for. Until it is durable or the
// journal has failed (a staged record that is not yet durable is no failure: it will be, and the
// member must not act as if it were not written).
bool ConsensusGroup::LogDisk::wait(uint64_t ticket) {
    for (;;) {
        const int64_t d = sys::storage_durable(ticket);
        if (d != 0)
            return d == 1;
        sys::sleep(kPollNs);
    }
}

int64_t ConsensusGroup::LogDisk::load(uint64_t group, std::span<std::byte> out, uint64_t offset) {
    return sys::raft_read(raft_log, group, out.data(), out.size(), offset);
}

ConsensusGroup::ConsensusGroup(uint64_t group)
    : m_group(group), m_forwarder(ReplicaApplier::kForwardGroup + group),
      m_transfer_channel(StateTransfer::kGroup + group) {}

bool ConsensusGroup::start(const Config& c) {
    m_link.slot = c.slot;
    m_link.port = c.port;
    m_disk.raft_log = c.raft_log;
    m_voter_count = c.voter_count;
    auto* member = new (m_member_storage) kraft::Member;
    m_applier.configure(static_cast<uint32_t>(m_group), consensus_ip_of, c.router, c.dropped, c.teller);
    m_collection_length = static_cast<uint8_t>(c.collection.size() < sizeof m_collection ? c.collection.size() : 0);
    std::memcpy(m_collection, c.collection.data(), m_collection_length);
    m_transfer.set_scope(covers, this);
    member->set_state_machine(&m_applier);
    (void)member->set_snapshot_policy(c.snapshot_every, c.snapshot_trailing);
    if (c.stand_first)
        member->hasten_first_election();
    m_key = *c.key; // (the wire's key is a view: this copy outlives the caller's)
    const raftwire::Key wire_key { m_key.data(), m_key.size() };
    if (!member->start(m_group, c.self_id, c.bootstrap, m_link, m_disk, wire_key, c.epoch)) {
        member->~Member();
        KLOG_ERROR("cluster: the consensus group's member did not start");
        return false;
    }
    {
        arch::IrqGuard guard; // cluster_info reads it
        m_member = member;
    }
    m_origin = c.origin;
    m_self_id = c.self_id;
    m_transfer.start(c.store, c.factory, m_transfer_channel, c.self_id);
    // Group 0's applier takes from the store's desk (while this node is a voter: follow_configuration);
    // a collection's group's takes what group 0's hands it.
    if (c.store == ~0u || c.factory == ~0u ||
        !m_applier.start(c.store, c.raft_log, 0, m_origin, m_transfer, m_group == 0) ||
        !m_forwarder.start(c.slot, c.port, consensus_ip_of, c.self_id, wire_key, c.epoch) ||
        !m_transfer_channel.start(c.slot, c.port, consensus_ip_of, c.self_id, wire_key, c.epoch))
        KLOG_ERROR("cluster: replicated collections are off here (no store, or the applier did not register)");
    return true;
}

bool ConsensusGroup::covers(const void* group, std::string_view name) {
    const auto* g = static_cast<const ConsensusGroup*>(group);
    if (g->m_group != 0)
        return name == g->collection();
    return !bootargs::get().raft_groups || g->m_applier.directory().find(name) == nullptr;
}

void ConsensusGroup::close() {
    kraft::Member* member = m_member;
    if (!member)
        return;
    {
        arch::IrqGuard guard; // cluster_info reads it
        m_member = nullptr;
    }
    member->~Member();
}

void ConsensusGroup::leave() {
    close();
    std::byte record[raftlog::kForgetBytes];
    const auto n = raftlog::encode_forget(record, m_group);
    const int64_t r = n ? m_disk.write(raftlog::Kind::Forget, { record, *n }) : -1;
    if (r < 0)
        KLOG_WARN("cluster: group %llu's state could not be forgotten here: it keeps its place in the RaftLog",
                  static_cast<unsigned long long>(m_group));
}

void ConsensusGroup::receive(uint64_t wire_group, std::span<const uint8_t> datagram) {
    std::span<const uint8_t> message;
    uint64_t sender = 0;
    if (wire_group == m_forwarder.group()) {
        if (!m_forwarder.receive(datagram, message, sender))
            return;
        if (raftdir::is_notice(message)) { // (group 0's leader to the nodes outside its voters)
            if (m_group == 0)
                (void)m_applier.heard(message, sender);
        } else if (raftout::is_outcome(message)) { // (group 0's: a change this node carried outside)
            m_applier.outcome(message);
        } else if (raftread::is_read_message(message)) {
            // (One that does not add up is dropped: refused, as the applier counts it.)
            if (const auto m = raftread::decode(message); m && m->type == raftread::kRemoved)
                removed(sender, m->a);
            else
                m_applier.read_message(*m_member, m_forwarder, m, sender);
        } else {
            const bool proposed = m_applier.forwarded(*m_member, message);
            audit_forwarded(consensus_ip_of(sender), message, proposed);
        }
    } else if (wire_group == m_transfer_channel.group()) {
        if (m_transfer_channel.receive(datagram, message, sender))
            m_transfer.received(message, sender, m_member->status(), sys::clock());
    } else { // (the member's, or one it refuses as it refuses any it cannot open)
        m_member->receive(datagram);
    }
}

const ConsensusGroup* ConsensusGroup::s_asking = nullptr;

bool ConsensusGroup::in_asking_configuration(uint32_t ip) {
    return s_asking->m_status.server(s_asking->id_of(ip)) != nullptr;
}

// A voter removed while it was down asks for votes forever: whoever it asks tells it so.
void ConsensusGroup::tell_removed() {
    const uint64_t outsider = m_member->take_outsider();
    if (outsider == 0)
        return;
    uint8_t notice[raftread::kMessageBytes];
    const size_t n = raftread::encode({ raftread::kRemoved, 0, m_member->status().term, 0 }, notice);
    (void)m_forwarder.send(outsider, { notice, n });
}

void ConsensusGroup::removed(uint64_t from, uint64_t term) {
    const bool before = m_member->status().removed;
    m_member->set_removed(term);
    if (before || !m_member->status().removed)
        return;
    char teller[16];
    (void)netcfg::format_ipv4(consensus_ip_of(from), teller, sizeof teller);
    KLOG_WARN("cluster: %s says this node was removed from the consensus group (replaced while it was down): it no "
              "longer votes or serves replicated collections (cluster_status: consensus.removed)",
              teller);
}

// What the configuration says this round: the voters a catch-up fetches from, and whether the
// store takes replicated changes here (a voter's applier) or refuses them as if no group ran.
void ConsensusGroup::follow_configuration(const kraft::MemberStatus& s) {
    uint64_t voters[kraft::kMaxServers];
    uint32_t n = 0;
    bool voter = false;
    for (uint8_t i = 0; i < s.server_count; ++i)
        if (s.servers[i].role == RAFT_VOTER) {
            voters[n++] = s.servers[i].id;
            voter = voter || (s.servers[i].id == m_self_id && !s.removed);
        }
    m_transfer.set_sources({ voters, n });
    if (m_group == 0)
        m_applier.set_outsider(!voter);
    if (m_group == 0 && voter != m_serving_as_voter &&
        sys::repl_serve(m_disk.raft_log, voter ? m_voter_count : 0, m_origin) == 0) {
        m_serving_as_voter = voter;
        KLOG_INFO("cluster: this node is %s of the consensus group", voter ? "a voter" : "no longer a voter");
    }
}

// raft_replace_after_s=: at the leader, a voter the membership protocol has held dead that long is
// replaced by the lowest-addressed live member outside the configuration.
void ConsensusGroup::replace_automatically(const kraft::MemberStatus& s, uint64_t now) {
    const uint32_t after_s = bootargs::get().raft_replace_after_s;
    // (A collection's group replaces voters once group 0's directory follows: kReassign, next.)
    if (after_s == 0 || m_group != 0 || !s.is_leader || m_replace.active() || now < m_next_automatic_ns)
        return;
    for (uint8_t i = 0; i < s.server_count; ++i) {
        const uint32_t ip = consensus_ip_of(s.servers[i].id);
        uint8_t state = 0;
        uint64_t for_ns = 0;
        if (s.servers[i].role != RAFT_VOTER || s.servers[i].id == m_self_id || !member_state(ip, state, for_ns) ||
            state != 2 || for_ns < uint64_t(after_s) * 1'000'000'000ull)
            continue;
        s_asking = this; // (one cluster task: one question at a time)
        const uint32_t with = lowest_live_member(in_asking_configuration);
        if (with == 0)
            return; // (nobody to take its place: asked again next round)
        m_replace.start(s.servers[i].id, id_of(with), ip, with, true, now);
        m_next_automatic_ns = now + kAutomaticRetryNs;
        return;
    }
}

// Group 0's leader tells every live member outside its voters the directory (they apply none of
// the group's log): whenever it changed, and every few seconds for members that came up since or
// lost a notice (datagrams).
void ConsensusGroup::tell_directory(const kraft::MemberStatus& s, uint64_t now) {
    if (m_group != 0 || !s.is_leader || !bootargs::get().raft_groups ||
        (m_applier.directory_changes() == m_told_changes && now < m_next_notice_ns))
        return; // (raft_groups=0: every collection lives in group 0, placed on its voters only)
    uint32_t members[cluster_abi::kFedMaxNodes];
    const size_t n = live_members(members);
    static uint8_t notice[raftdir::kMaxNotice];
    const size_t bytes = m_applier.directory().notice(s.applied_index, notice);
    for (size_t i = 0; i < n && bytes != 0; ++i) {
        const auto* server = s.server(id_of(members[i]));
        if (!server || server->role != RAFT_VOTER)
            (void)m_forwarder.send(consensus_id_of(members[i]), { notice, bytes });
    }
    m_told_changes = m_applier.directory_changes();
    m_next_notice_ns = now + kNoticeEveryNs;
}

void ConsensusGroup::turn() {
    m_member->turn();
    tell_removed();
    const uint64_t now = sys::clock();
    m_transfer.pump(now);
    if (m_group == 0)
        m_applier.pump(*m_member, m_forwarder, now);
    else
        m_applier.service(*m_member, m_forwarder, now);
    kraft::MemberStatus s = m_member->status();
    follow_configuration(s);
    ReplaceRequest request;
    {
        arch::IrqGuard guard;
        request = m_request;
        m_request.pending = false;
    }
    if (request.pending)
        (void)m_replace.start(id_of(request.dead_ip), id_of(request.with_ip), request.dead_ip, request.with_ip, false,
                              now);
    replace_automatically(s, now);
    m_replace.step(*m_member, s, now);
    tell_directory(s, now);
    // A voter group 0 replaced is replaced in every collection's group it held: the directory says
    // so (kReassign), and each group's leader follows it (follow_placement).
    if (m_group == 0 && m_replace.status().done != m_replaced_seen) {
        m_replaced_seen = m_replace.status().done;
        const VoterReplacement::Status r = m_replace.status();
        for (const raftdir::Entry& e : m_applier.directory().entries())
            if (e.has_voter(r.dead_ip) && !e.has_voter(r.with_ip))
                m_applier.reassign_later(e.group, r.dead_ip, r.with_ip);
    }
    s = m_member->status();
    // Work (the log, the commit or the applied count moved, or changes wait for an answer) keeps the
    // rounds short for a while after it: the messages of one commit's round trips follow each
    // other. Heartbeats alone are not work: an idle group keeps the slow rounds.
    const uint64_t now_ns = sys::clock();
    if (s.last_index != m_status.last_index || s.commit != m_status.commit || s.applied != m_status.applied ||
        m_applier.in_flight() || m_transfer.active())
        m_busy_until = now_ns + kBusyWindowNs;
    m_busy = now_ns < m_busy_until;
    const ReplicaApplier::Counters c = m_applier.counters();
    const StateTransfer::Counters t = m_transfer.counters();
    const uint64_t directory_changes = m_applier.directory_changes();
    arch::IrqGuard guard;
    if (directory_changes != m_directory_seen) { // (rare: a placement, a drop, a snapshot loaded)
        m_directory = m_applier.directory();
        m_directory_seen = directory_changes;
    }
    m_status = s;
    m_replication = c;
    m_transfers = t;
    m_transfer_active = m_transfer.active() || s.installing;
    m_replace_status = m_replace.status();
    m_round_ns = now_ns;
}

uint64_t ConsensusGroup::id_of(uint32_t ip) const { return m_group == 0 ? consensus_id_of(ip) : ip; }

// A collection's group, at its leader: a voter the directory no longer names is replaced by the
// one it names instead (one at a time, as group 0 replaces its own; the newcomer runs a member that
// joined the group without bootstrapping it). Tried again 30 s after a failure.
void ConsensusGroup::follow_placement(const raftdir::Entry& e, uint64_t now) {
    const kraft::MemberStatus& s = m_status;
    if (m_group == 0 || !m_member || !s.is_leader || m_replace.active() || now < m_next_automatic_ns)
        return;
    uint32_t dead = 0, with = 0;
    for (uint8_t i = 0; i < s.server_count; ++i) {
        const uint32_t ip = consensus_ip_of(s.servers[i].id);
        if (s.servers[i].role == RAFT_VOTER && !e.has_voter(ip))
            dead = ip;
    }
    for (uint32_t ip : e.voter_span()) {
        const auto* server = s.server(ip);
        if (!server || server->role != RAFT_VOTER)
            with = ip;
    }
    if (dead == 0 || with == 0 || dead == static_cast<uint32_t>(m_self_id))
        return; // (this leader itself replaced: another voter's leadership does it)
    if (m_replace.start(dead, with, dead, with, true, now))
        m_next_automatic_ns = now + kAutomaticRetryNs;
}

bool ConsensusGroup::is_voter(uint64_t id) const {
    for (uint8_t i = 0; i < m_status.server_count; ++i)
        if (m_status.servers[i].id == id && m_status.servers[i].role == RAFT_VOTER)
            return true;
    return false;
}

int64_t ConsensusGroup::request_replace(uint32_t dead_ip, uint32_t with_ip) {
    if (!m_member)
        return -static_cast<int64_t>(ktl::Error::NotReady);
    if (!m_status.is_leader)
        return -static_cast<int64_t>(ktl::Error::NotLeader);
    if (m_request.pending || m_replace_status.active())
        return -static_cast<int64_t>(ktl::Error::Exists);
    const auto* dead = m_status.server(id_of(dead_ip));
    const auto* with = m_status.server(id_of(with_ip));
    if (!dead || dead->role != RAFT_VOTER || dead->id == m_self_id || (with && with->role == RAFT_VOTER))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    m_request = ReplaceRequest { dead_ip, with_ip, true };
    return 0;
}

void ConsensusGroup::fill(cluster_abi::ClusterInfo& out) const {
    if (!m_member)
        return;
    const kraft::MemberStatus& s = m_status;
    out.raft_id = static_cast<uint32_t>(s.id);
    out.raft_voters = m_voter_count; // (the group's size: a replacement keeps it)
    out.raft_term = s.term;
    out.raft_leader = s.leader;
    out.raft_leader_ip = consensus_ip_of(s.leader);
    out.raft_commit = s.commit;
    out.raft_role = s.role;
    out.raft_sent = s.sent;
    out.raft_received = s.received;
    out.raft_refused = s.refused;
    // (A member that found state found it on a disk; a new one wrote its first records to one.)
    out.raft_durable = m_disk.logged || m_member->recovered_term() ? 1 : 0;
    out.raft_last_index = s.last_index;
    out.raft_recovered_term = m_member->recovered_term();
    out.raft_recovered_entries = m_member->recovered_entries();
    out.raft_snapshot_index = s.snapshot_index;
    out.raft_snapshot_term = s.snapshot_term;
    out.raft_log_entries = s.entries;
    out.raft_snapshots_taken = s.snapshots_taken;
    out.raft_snapshots_installed = s.snapshots_installed;
    add_counters(out); // (out starts zeroed: cluster_service's info())
    out.raft_server_count = s.server_count;
    out.raft_member = s.member ? 1 : 0;
    out.raft_removed = s.removed ? 1 : 0;
    for (uint8_t i = 0; i < s.server_count && i < cluster_abi::kRaftMaxServers; ++i) {
        out.raft_servers[i].id = s.servers[i].id;
        out.raft_servers[i].match = s.servers[i].match;
        out.raft_servers[i].ip = consensus_ip_of(s.servers[i].id);
        out.raft_servers[i].role = s.servers[i].role;
    }
    m_replace_status.fill(out, m_round_ns);
    out.repl_placements = m_replication.placements;
    const auto entries = m_directory.entries();
    out.placement_next_group = m_directory.next_group();
    for (const raftdir::Entry& e : entries) {
        if (out.placement_count == cluster_abi::kMaxPlacements)
            break;
        cluster_abi::Placement& p = out.placements[out.placement_count++];
        std::memcpy(p.name, e.name, e.name_length);
        p.name_length = e.name_length;
        p.group = e.group;
        p.voter_count = e.voter_count;
        for (uint8_t i = 0; i < e.voter_count && i < raftdir::kMaxVoters; ++i)
            p.voters[i] = e.voters[i];
    }
}

void ConsensusGroup::fill(cluster_abi::GroupInfo& out) const {
    const kraft::MemberStatus& s = m_status;
    out = {};
    out.group = m_group;
    out.term = s.term;
    out.commit = s.commit;
    out.last_index = s.last_index;
    out.leader_ip = consensus_ip_of(s.leader);
    out.role = m_member ? s.role : 0;
    for (uint8_t i = 0; i < s.server_count && out.server_count < 5; ++i) {
        out.server_ip[out.server_count] = consensus_ip_of(s.servers[i].id);
        out.server_role[out.server_count] = s.servers[i].role;
        out.server_match[out.server_count++] = s.servers[i].match;
    }
    out.applied = m_replication.applied;
    out.snapshot_index = s.snapshot_index;
    out.snapshots_taken = s.snapshots_taken;
    out.snapshots_installed = s.snapshots_installed;
}

void ConsensusGroup::add_counters(cluster_abi::ClusterInfo& out) const {
    const ReplicaApplier::Counters& c = m_replication;
    out.repl_applied += c.applied;
    out.repl_failed += c.failed;
    out.repl_proposed += c.proposed;
    out.repl_refused += c.refused;
    out.repl_timed_out += c.timed_out;
    out.repl_installs += c.installs;
    out.repl_forwarded_out += c.forwarded_out;
    out.repl_forwarded_in += c.forwarded_in;
    out.repl_reads += c.reads;
    out.repl_read_rounds += c.read_rounds;
    out.repl_beacons += c.beacons;
    const StateTransfer::Counters& t = m_transfers;
    out.xfer_done += t.transfers;
    out.xfer_collections += t.collections;
    out.xfer_bytes += t.bytes;
    out.xfer_restarts += t.restarts;
    out.xfer_incomplete += t.incomplete;
    out.xfer_served_pages += t.served_pages;
    out.xfer_served_bytes += t.served_bytes;
    out.xfer_active |= m_transfer_active ? 1 : 0;
}

} // namespace clusterd

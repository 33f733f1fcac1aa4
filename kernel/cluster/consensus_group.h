#pragma once
// One Raft group this node is a member of (issue 35; docs/replication.md): its member, the state
// machine it applies (the replicated collections' changes: replica_applier.h), the channels its
// members forward changes and reads on and catch up on, the replacement of a dead voter, and the
// status the cluster task publishes for cluster_info. The node's consensus (consensus.h) owns the
// UDP endpoint, the engine's heap and the groups, and hands each datagram to the group whose wire
// group id it carries. Group 0 is the cluster's own (raft_voters=); a group per collection, named
// by group 0's directory (lib/raft/directory.h), is the next step (docs/replication.md).
// Run by the cluster task; fill(), is_voter() and request_replace() are called with IRQs masked.
#include <cstdint>
#include <span>
#include <string_view>

#include <abi/cluster.h>
#include <cluster/types.h>

#include "../raft/raft_member.h"
#include "peer_channel.h"
#include "replica_applier.h"
#include "state_transfer.h"
#include "voter_replacement.h"

namespace clusterd {

// Where a raft id lives (consensus.cpp): the places in raft_voters= are ids 1..n, every other id is
// the node's IPv4 address.
uint32_t consensus_ip_of(uint64_t id);
uint64_t consensus_id_of(uint32_t ip);

class ConsensusGroup {
public:
    struct Config {
        uint64_t self_id = 0;
        std::span<const uint64_t> bootstrap; // the first voters' ids (empty: a spare)
        uint32_t voter_count = 0;            // the group's size: what `replicas` must name
        uint64_t origin = 0, epoch = 0;      // this node's changes in the log; this life of the member
        uint32_t slot = ~0u;                 // the node's UDP endpoint for the groups
        uint16_t port = 0;
        const cluster::Key* key = nullptr;
        uint32_t raft_log = ~0u, store = ~0u, factory = ~0u; // capabilities
        unsigned snapshot_every = 0, snapshot_trailing = 0;
        std::string_view collection;               // a collection's group: the collection it holds
        ReplicaApplier::Router router = nullptr;   // group 0's: the collections' groups here
        ReplicaApplier::Dropped dropped = nullptr; // a collection's group's: its drop, for group 0
        ReplicaApplier::Teller teller = nullptr;   // a collection's group's: group 0's tell()
        bool stand_first = false;                  // Member::hasten_first_election()
    };

    explicit ConsensusGroup(uint64_t group);
    ~ConsensusGroup() { close(); }
    ConsensusGroup(const ConsensusGroup&) = delete;
    ConsensusGroup& operator=(const ConsensusGroup&) = delete;
    uint64_t id() const { return m_group; }
    // The datagrams of wire group `wire_group` are this group's (its member's or a channel's).
    bool owns(uint64_t wire_group) const {
        return wire_group == m_group || wire_group == m_forwarder.group() || wire_group == m_transfer_channel.group();
    }

    // Starts the member on the state the RaftLog holds for the group (or bootstrapping it). False:
    // the engine refused (logged). The applier and channels that fail to start leave replicated
    // collections off (logged), the member running.
    bool start(const Config& c);
    bool running() const { return m_member != nullptr; }
    // The member leaves: what it held in memory goes (its state on the disk stays).
    void close();
    // This node left the group for good (its collection dropped, or its place given to another):
    // the member closes and its state on the disk goes too (a Forget record of the RaftLog).
    void leave();
    // The directory of replicated collections (group 0's: lib/raft/directory.h), as applied here.
    const raftdir::Directory& directory() const { return m_applier.directory(); }
    // The directory as the last round published it (read with IRQs masked, by system calls).
    const raftdir::Directory& published_directory() const { return m_directory; }
    // Group 0's applier hands a collection's changes and reads to its group's (false: not running).
    bool route(ReplicaApplier::Route& out) {
        if (!m_member)
            return false;
        out = { &m_applier, m_member, &m_forwarder };
        return true;
    }
    // Group 0: the placement of the collection group `group` dropped is to be forgotten.
    void forget_later(uint32_t group, std::string_view name, uint64_t ticket, int64_t result) {
        m_applier.forget_later(group, name, ticket, result);
    }
    std::string_view collection() const { return { m_collection, m_collection_length }; }
    // Group 0: a message to the node at `ip` on its forwarding channel (false: not sent).
    bool tell(uint32_t ip, std::span<const uint8_t> message) {
        return m_member && m_forwarder.send(consensus_id_of(ip), message);
    }
    uint64_t directory_changes() const { return m_applier.directory_changes(); }
    // Group 0: this node routes by a directory its leader told it (outside its voters).
    bool told_directory() const { return m_applier.told(); }
    // What start() found on the disk (0 and 0: a new member).
    uint64_t recovered_term() const { return m_member ? m_member->recovered_term() : 0; }
    uint64_t recovered_entries() const { return m_member ? m_member->recovered_entries() : 0; }

    // A datagram of wire group `wire_group`: a channel's, else the member's.
    void receive(uint64_t wire_group, std::span<const uint8_t> datagram);
    // One round: the member's turn, changes taken and applied, catch-up, replacement, the status.
    void turn();
    // The last rounds saw work (the log, the commit or the applied count moved, changes in flight).
    bool busy() const { return m_busy; }

    // At a collection's group's leader: the voters follow its placement (a voter reassigned by
    // group 0's directory is replaced in the group).
    void follow_placement(const raftdir::Entry& e, uint64_t now_ns);

    // IRQs masked (the last round's status).
    bool is_voter(uint64_t id) const;
    int64_t request_replace(uint32_t dead_ip, uint32_t with_ip);
    void fill(cluster_abi::ClusterInfo& out) const;
    // A collection's group (IRQs masked): its member's role, term, leader, commit, log and, at the
    // leader, how far each voter's log is known to reach.
    void fill(cluster_abi::GroupInfo& out) const;
    // This group's replication and catch-up counters, added to the node's (IRQs masked).
    void add_counters(cluster_abi::ClusterInfo& out) const;

private:
    struct UdpLink final : kraft::Link {
        void send(uint64_t to, std::span<const uint8_t> d) override;
        uint32_t slot = ~0u;
        uint16_t port = 0;
    };
    struct LogDisk final : kraft::Disk {
        int64_t write(raftlog::Kind kind, std::span<const std::byte> payload) override;
        int64_t durable(uint64_t ticket) override;
        bool wait(uint64_t ticket) override;
        int64_t load(uint64_t group, std::span<std::byte> out, uint64_t offset) override;
        uint32_t raft_log = ~0u;
        bool logged = false; // a commit carried one of its records: the member's state is on a disk
    };
    struct ReplaceRequest {
        uint32_t dead_ip, with_ip;
        bool pending;
    };

    void tell_removed();
    void removed(uint64_t from, uint64_t term);
    void follow_configuration(const kraft::MemberStatus& s);
    void replace_automatically(const kraft::MemberStatus& s, uint64_t now);
    void tell_directory(const kraft::MemberStatus& s, uint64_t now);
    uint64_t m_told_changes = ~0ull, m_next_notice_ns = 0;
    // lowest_live_member's filter: in the configuration of the group asking (s_asking).
    static bool in_asking_configuration(uint32_t ip);
    // An address's raft id in this group (group 0: raft_voters= places are 1..n; elsewhere the address).
    uint64_t id_of(uint32_t ip) const;
    uint64_t m_replaced_seen = 0; // group 0's replacements completed, reassigned in the directory
    static const ConsensusGroup* s_asking;

    const uint64_t m_group;
    uint64_t m_self_id = 0, m_origin = 0;
    uint32_t m_voter_count = 0;
    bool m_serving_as_voter = false; // what the store was last told (repl_serve)
    cluster::Key m_key {};
    UdpLink m_link;
    LogDisk m_disk;
    alignas(kraft::Member) unsigned char m_member_storage[sizeof(kraft::Member)];
    kraft::Member* m_member = nullptr;
    ReplicaApplier m_applier;
    PeerChannel m_forwarder;
    PeerChannel m_transfer_channel;
    StateTransfer m_transfer;
    VoterReplacement m_replace;
    ReplaceRequest m_request {}; // left by a tool's system call, taken by the next round (IRQs masked)
    uint64_t m_next_automatic_ns = 0;
    bool m_busy = false;
    uint64_t m_busy_until = 0;

    // The last round's, for cluster_info (IRQs masked).
    kraft::MemberStatus m_status {};
    ReplicaApplier::Counters m_replication {};
    StateTransfer::Counters m_transfers {};
    bool m_transfer_active = false;
    VoterReplacement::Status m_replace_status {};
    uint64_t m_round_ns = 0;
    char m_collection[raftdir::kMaxNameLength] = {};
    uint8_t m_collection_length = 0;
    // What this group's snapshots cover (StateTransfer::Covers): group 0 those placed nowhere.
    static bool covers(const void* group, std::string_view name);
    raftdir::Directory m_directory {}; // the applier's, copied when it changed
    uint64_t m_directory_seen = ~0ull;
};

} // namespace clusterd

#pragma once
// The consensus group's state machine on this node (issue 35; docs/replication.md): the cluster's
// replicated collections. The store sends every change to a replicated collection to the group
// (kernel/vector/replication_desk.h); at the leader this takes each one (repl_take) and proposes
// it; every voter applies each committed change to its own store through the store's ordinary
// calls (the same the storage task replays the log with), so each voter's copy is durable in its
// own write-ahead log; the voter that took a change answers its caller (repl_done) with the
// result it got. A change proposed and then not applied through that proposal (the leader lost
// its place) is answered -TimedOut: another leader may still commit it, so the outcome is unknown.
// A change made at a follower is carried to the member it knows as leader (a PeerChannel of group
// kForwardGroup), proposed there as it came, and answered here when this voter applies the
// committed command that carries its origin; a command lost on the way, or refused by a node that
// no longer leads, ends in the follower's timeout (an unknown outcome). A snapshot installed from
// the leader waits for the collections it covers (state_transfer.h).
// A linearizable read (the desk's read barrier) writes nothing: the leader hands out a read index
// once a round of probes shows it still leads (lib/raft/read_index.h), over the same channel, and
// the reader is answered once this voter has applied the log up to that index.
// Group 0's applier also applies the directory of replicated collections (lib/raft/directory.h)
// and carries it in the group's snapshots: a replicated collection is placed (kPlace, its voters
// chosen by the node that took the create) before its create is proposed, and a committed drop
// forgets its placement on every voter in log order.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <ktl/result.h>

#include "../raft/raft_member.h"
#include <raft/directory.h>
#include <raft/outcome.h>
#include <raft/read_index.h>
#include "peer_channel.h"
#include "state_transfer.h"

#include <storage/records.h>

namespace clusterd {

class ReplicaApplier final : public kraft::StateMachine {
public:
    static constexpr uint64_t kForwardGroup = 0x4657440000000000ull; // "FWD"
    static constexpr size_t kMaxCreate = 128; // a create's command (the header and a 100-byte record)

    ReplicaApplier();
    // A collection's own group as group 0's applier reaches it: its applier, member and channel,
    // when this node runs a member of it (false: it does not).
    struct Route {
        ReplicaApplier* applier;
        kraft::Member* member;
        PeerChannel* forwarder;
    };
    using Router = bool (*)(uint32_t group, Route& out);
    // A collection's group applied a drop this node's caller made (its ticket, its result): group 0
    // is to forget the placement, and the caller is answered once it has.
    using Dropped = void (*)(uint32_t group, std::string_view name, uint64_t ticket, int64_t result);
    // A message to the node at `ip` on group 0's forwarding channel (a collection's group tells a
    // node outside it how its change went: raft/outcome.h). False when it could not be sent.
    using Teller = bool (*)(uint32_t ip, std::span<const uint8_t> message);
    // What the group is, before its member starts (a snapshot it loads then carries the directory):
    // `group`, its id; `ip_of`, a raft id's address;
    // group 0's applier keeps the directory and hands what the desk gives it for a collection
    // placed in a group of its own to `router`'s; a collection's group reports drops to `dropped`.
    void configure(uint32_t group, uint32_t (*ip_of)(uint64_t), Router router, Dropped dropped,
                   Teller teller = nullptr);
    // store: the VectorStore capability; log: the RaftLog one; `serve`: registers this task as the
    // desk's applier (group 0's); `transfer` fetches what an installed snapshot covers.
    bool start(uint32_t store, uint32_t log, uint32_t voters, uint64_t origin, StateTransfer& transfer, bool serve);
    // One round of group 0's: what waits at the desk is taken; a collection's change or read goes
    // to its group (route), group 0's own are proposed at the leader or forwarded to the leader a
    // follower knows, elsewhere refused. Then service().
    void pump(kraft::Member& member, PeerChannel& forwarder, uint64_t now_ns);
    // One round of any group's: reads served, placed creates handed to their group, forgets
    // proposed (group 0's), and changes taken long ago and never applied here answered -TimedOut.
    void service(kraft::Member& member, PeerChannel& forwarder, uint64_t now_ns);
    // One change or read of the desk's, taken by this group: None, or why not (NotLeader: no
    // leader known; WouldBlock: no room); the caller answers a refusal.
    ktl::Error take(kraft::Member& member, PeerChannel& forwarder, std::span<const uint8_t> command, uint64_t now_ns);
    // Group 0's: a collection's group applied its drop here; group 0 is asked to forget its
    // placement (kForget, proposed or forwarded again until this node applies it), and the drop's
    // caller (`ticket`) is answered `result` then (-TimedOut if that takes past the time limit).
    void forget_later(uint32_t group, std::string_view name, uint64_t ticket, int64_t result);
    // Group 0's leader: voter `dead` of collection group `group` is replaced by `with` (kReassign).
    void reassign_later(uint32_t group, uint32_t dead, uint32_t with);
    // A change a follower forwarded: proposed as it came, if this member leads and it is well formed.
    // True when proposed.
    // Group 0's: a change of a collection placed in a group of its own goes to that group (it came
    // from a node outside it: relay()), never into group 0's log.
    bool forwarded(kraft::Member& member, std::span<const uint8_t> command);
    // A collection's group's: a change from a node outside the group, proposed at the leader or sent
    // on to the leader this member knows. True when it went on.
    bool relay(kraft::Member& member, PeerChannel& forwarder, std::span<const uint8_t> command);
    // Group 0's: the outcome of a change this node carried to a collection's group it is no voter of.
    void outcome(std::span<const uint8_t> message);
    // A read-index message from member `from`, decoded (nothing: one that did not add up, refused):
    // an ask, a probe, an acknowledgement or an answer.
    void read_message(kraft::Member& member, PeerChannel& channel, const std::optional<raftread::Message>& m,
                      uint64_t from);

    // A linearizable read for another node (a read from outside the collection's group:
    // federation.h): a read index through this group, as the desk's read barrier takes, its outcome
    // kept for peer_read_state(). The read's handle (> 0, below 2^63), or why not (NotLeader: no
    // leader known; WouldBlock: no room).
    ktl::Result<uint64_t> peer_read(kraft::Member& member, PeerChannel& forwarder, std::string_view name,
                                    uint64_t now_ns);
    // 0 while it waits, 1 once this voter has applied the log up to its read index, or -error; a
    // read that ended is forgotten once asked (any read, a minute after it began).
    static int64_t peer_read_state(uint64_t handle);
    static void peer_read_cancel(uint64_t handle);

    void apply(std::span<const uint8_t> command) override;
    void proposal_failed(uint64_t tag) override;
    void installed(uint64_t applied) override;
    void install_begin(uint64_t index, uint64_t from) override;
    bool install_ready() override;
    size_t save(std::span<uint8_t> out) override;
    bool load(std::span<const uint8_t> state) override;

    // The directory as applied here (group 0's voters), or, at a node outside group 0's voters
    // (which applies none of its log), as group 0's leader last told it (raftdir notices); and a
    // count that moves whenever it changes.
    const raftdir::Directory& directory() const { return told() ? m_heard : m_directory; }
    // Outside group 0's voters, with a directory its leader told (until the first notice, the one
    // applied here stays in use: an empty one would make the node leave every group it runs).
    bool told() const { return m_outsider && m_heard_version != 0; }
    uint64_t directory_changes() const { return m_directory_changes; }
    // Group 0's: whether this node is outside its voters (the turn's configuration says).
    void set_outsider(bool outsider);
    bool outsider() const { return m_outsider; }
    // Group 0's: a notice from its leader `from` (raftdir::take_notice); taken when newer than the
    // last. True when taken. An outsider sends what it proposes in group 0 (a placement, a forget)
    // to the member that told it last.
    bool heard(std::span<const uint8_t> notice, uint64_t from);

    struct Counters {
        uint64_t applied, failed, proposed, refused, timed_out, installs;
        uint64_t forwarded_out, forwarded_in; // sent to the leader; proposed here for a follower
        uint64_t reads;                       // linearizable reads answered here (vec_sync, store_sync)
        uint64_t read_rounds;                 // rounds of probes this member ran as the leader to confirm reads
        uint64_t placements;                  // creates whose placement this node proposed first
        uint64_t beacons;                     // entries proposed only to tell followers a commit
    };
    Counters counters() const { return m_counters; }
    // Changes and reads taken here and not yet answered, or followers' reads waiting here.
    bool in_flight() const {
        for (const auto& f : m_in_flight)
            if (f.ticket)
                return true;
        return m_reads.waiting() != 0;
    }

private:
    static constexpr size_t kInFlight = 16; // the desk's slots
    // Under the MCP tool's 10 s limit: its caller learns the outcome is unknown, not that it ran out.
    static constexpr uint64_t kTimeoutNs = 8'000'000'000ull;
    // A follower's read not answered by then is asked again (its question or the answer may have
    // been lost: datagrams), until answered or timed out.
    static constexpr uint64_t kAskAgainNs = 1'000'000'000ull;
    // A create waits for its placement: proposed (Placing), then committed here (Placed), when the
    // create itself is proposed as it came (kept in the slot's create buffer until then).
    // A read of a name this node has not seen placed goes through group 0 first (its placement may
    // be on its way) and then, once it is placed, through the collection's group (Chained).
    // A change of a collection this node holds no copy of is carried to one of its voters and
    // answered by the group's outcome message (Outside).
    enum class Phase : uint8_t { Change, Placing, Placed, Chained, Outside };
    struct InFlight {
        uint64_t ticket, since_ns;
        uint64_t to;    // the leader a follower forwarded it to (0: proposed here)
        bool read;      // a read barrier: answered once the log is applied up to `index` here
        uint64_t index; // (0: the leader has not handed it out yet)
        Phase phase;
        uint16_t create_length;
        uint64_t asked_ns = 0; // a follower's read: when its question was last sent again
        uint32_t group = 0;    // Outside: the collection's group
    };
    // Outside: the change carried to a voter of `e`'s group (the one that last answered for it, or
    // the next after one that did not). None, or why not (WouldBlock: no room, or not sent).
    ktl::Error carry_outside(const raftdir::Entry& e, PeerChannel& forwarder, std::span<const uint8_t> command,
                             uint64_t now_ns);
    // A collection's group: the outcome of a change a node outside it made, kept until the round's
    // end, when the leader tells it (the others forget it).
    void keep_outcome(uint64_t origin, uint64_t ticket, int64_t result, std::span<const bool> absent);
    void tell_outcomes(const kraft::MemberStatus& s);
    void remember_voter(uint32_t group, uint32_t ip);
    InFlight* free_slot(); // (nullptr: all kInFlight taken)
    // Proposed at the leader, or sent to the leader a follower knows; false when neither could.
    static bool submit(kraft::Member& member, PeerChannel& forwarder, uint64_t forward_to,
                       std::span<const uint8_t> command, uint64_t ticket);
    // A create of a collection the directory does not place yet: its placement proposed and the
    // create kept in the slot. False when this does not apply (placed already, or no directory).
    bool place_first(kraft::Member& member, PeerChannel& forwarder, const kraft::MemberStatus& s,
                     std::span<const uint8_t> command, InFlight& slot, uint64_t now_ns);
    // The creates whose placement is committed, handed to the collection's group once it has a leader.
    void submit_placed(kraft::Member& member, PeerChannel& forwarder, uint64_t now_ns);
    // Slot `i`'s kept command handed to the group placing `name` (None: it took it; NotLeader: not yet).
    ktl::Error hand_over(size_t i, std::string_view name, uint64_t now_ns);
    void propose_forgets(kraft::Member& member, PeerChannel& forwarder);
    int64_t apply_directory(uint16_t type, std::span<const std::byte> record);
    // A placement this node proposed was applied (result: its group, or why not).
    void placed(uint64_t ticket, int64_t result);
    bool send_read(PeerChannel& channel, uint64_t to, const raftread::Message& m);
    // The leader's rounds and answers, and the reads whose index this voter has applied.
    void serve_reads(const kraft::MemberStatus& s, PeerChannel& channel, uint64_t now_ns);
    void read_indexed(uint64_t ticket, uint64_t from, uint64_t index);
    int64_t apply_record(uint16_t type, std::span<const std::byte> record);
    bool placed_in_own_group(std::span<const std::byte> record) const;
    // This node's IPv4 address: the high half of its changes' origin.
    uint32_t self_ip() const { return static_cast<uint32_t>(m_origin >> 32); }
    int64_t apply_once(const storage::DecodedRecord& d);
    void settle(uint64_t ticket, int64_t result, std::span<const bool> absent = {});
    // The caller of `ticket` told `result`: a desk's caller through repl_done, a peer read kept.
    void answer(uint64_t ticket, int64_t result, std::span<const bool> absent = {});
    int64_t open(std::string_view name, uint32_t* dim);

    uint32_t m_store = ~0u, m_log = ~0u;
    uint64_t m_origin = 0;
    StateTransfer* m_transfer = nullptr;
    InFlight m_in_flight[kInFlight] {};
    Counters m_counters {};
    raftread::LeaderReads m_reads;
    std::byte* m_command; // one command being taken or applied (kMaxCommand)
    bool* m_missing;      // the last delete's flags for ids it did not find (abi::kMaxDeleteIds)
    uint32_t m_missing_count = 0;
    uint32_t m_group = 0;
    bool m_places = false;
    uint32_t (*m_ip_of)(uint64_t) = nullptr;
    Router m_router = nullptr;
    Dropped m_dropped = nullptr;
    Teller m_teller = nullptr;
    static constexpr size_t kOutcomes = 8; // changes from outside applied in one round (more: they time out)
    struct Told {
        uint32_t ip;
        uint16_t length; // 0: free
        uint8_t message[raftout::kMaxBytes];
    };
    Told m_told[kOutcomes] {};
    // Where this node carries the changes of collections it holds no copy of: per group, the voter
    // that answered last (a leader, usually).
    struct Hint {
        uint32_t group, ip;
    };
    static constexpr size_t kHints = 8;
    Hint m_hints[kHints] {};
    size_t m_next_hint = 0;
    uint32_t m_voter_ips[kraft::kMaxServers] {}; // the group's voters as the last round saw them
    size_t m_voter_count = 0;
    struct Forget {
        uint32_t group;
        uint8_t name_length;
        char name[raftdir::kMaxNameLength];
        uint64_t since_ns, sent_ns; // (sent_ns 0: not sent yet)
        uint64_t ticket;            // the drop's caller, until answered (0: answered)
        int64_t result;
    };
    void forgotten(uint32_t group);
    // A collection's group: its collection's drop was applied; what comes after it is refused (a
    // create of the name meanwhile is to go to the next placement), and its snapshots say so.
    bool m_closed = false;
    bool m_beacon = false;    // a follower's change was applied here: its commit told at once (service)
    uint64_t m_noop_term = 0; // the term a no-op was proposed in (group 0: each term; others: for waiting reads)
    static constexpr size_t kForgets = 8;
    Forget m_forgets[kForgets] {};
    raftdir::Reassign m_reassigns[raftdir::kMaxEntries] {}; // (group 0: none waiting)
    alignas(8) uint8_t m_creates[kInFlight][kMaxCreate] {}; // each Placing slot's create, each Chained slot's read
    raftdir::Directory m_directory;
    uint64_t m_directory_changes = 0;
    raftdir::Directory m_heard;   // group 0's, from its leader's notices (an outsider's)
    uint64_t m_heard_version = 0; // the notice's: its leader's applied index then
    uint64_t m_heard_from = 0;    // and that leader's raft id
    // Group 0's leader as this member knows it (an outsider: the one that told it the directory).
    uint64_t leader_of(const kraft::MemberStatus& s) const;
    // An outsider's creates and forgets, which it never applies: done once the directory it is
    // told says so.
    void follow_heard();
    bool m_outsider = false;
};

} // namespace clusterd

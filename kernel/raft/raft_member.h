#pragma once
// One member of a Raft group in the kernel (issue 35; docs/replication.md): canonical's engine
// (lib/raft) behind a raft_io of the kernel's. Its messages leave as lib/raft/wire datagrams,
// sealed under the cluster key, through a Link, and come back through receive(), put together in
// each sender's order (the engine needs it). Every change to what it keeps (term, vote, entries)
// is made by encoding the write-ahead log's record for it (lib/raft/log_records.h), writing that
// record to its Disk and replaying it into its own state, so what recovery rebuilds from those
// records is the state it ran with. Term and vote are durable before set_term/set_vote return; an
// append is completed (the engine then acts on it: a follower acknowledges, a leader counts itself)
// only once the commit carrying it is durable. A member started on a Disk that holds its group's
// state takes it up (no bootstrap): a node restarted into its group keeps its vote and its log.
// The log's entries are the disk's and the engine's to keep: the member holds its term, vote,
// the log's bounds and its snapshot's (index, term) only; the engine loads the entries and the
// snapshot from the disk when it starts, and reads the snapshot back from the disk to send it.
// Snapshots (member_snapshots.cpp) bound the log: the engine takes one every `threshold` applied
// entries and keeps `trailing` entries behind it; a member that fell behind the leader's log
// installs the leader's. The state machine is still the applied commands' count and hash.
// Upstream's defects the host simulation found (docs/replication.md) are worked around here as
// its simulated raft_io does: an InstallSnapshot's term corrected on send, an AppendEntries whose
// previous entry lies inside the snapshot rebased on it, a snapshot read completed (not
// cancelled) at close, and an InstallSnapshot arriving while a snapshot is being taken dropped
// (upstream would follow a null pointer when the take completes; the leader sends it again).
//
// Driven by one task: start(), then receive() for each datagram and turn() at least every few
// milliseconds (ticks and the completion of the requests the engine made in between). Nothing
// here blocks or allocates but through the engine's bounded heap (raft_heap.h) and the log.
#include <cstddef>
#include <cstdint>
#include <span>

#include <raft/engine.h>
#include <raft/log_records.h>
#include <raft/wire.h>

namespace kraft {

// Where a member's datagrams go: the network's UDP endpoint under the cluster key, or a test's
// loopback. `to` is a raft id of the group.
class Link {
public:
    virtual void send(uint64_t to, std::span<const uint8_t> datagram) = 0;

protected:
    ~Link() = default;
};

// Where a member's records go: the node's RaftLog (the write-ahead log), or a test's memory.
class Disk {
public:
    // One record: the commit ticket that carries it (0: nothing to wait for), or -ktl::Error.
    virtual int64_t write(raftlog::Kind kind, std::span<const std::byte> payload) = 0;
    // Whether commit `ticket` is durable: 1 yes, 0 not yet, < 0 never (the journal failed).
    virtual int64_t durable(uint64_t ticket) = 0;
    // Blocks until commit `ticket` is durable: false if it never will be.
    virtual bool wait(uint64_t ticket) = 0;
    // The group's durable state as a stream (lib/raft/log_image.h): its size when out is empty,
    // otherwise the bytes from `offset` copied into out (< 0: -ktl::Error). Read in windows of
    // kLoadWindow at most.
    static constexpr size_t kLoadWindow = 1u << 20;
    virtual int64_t load(uint64_t group, std::span<std::byte> out, uint64_t offset) = 0;

protected:
    ~Disk() = default;
};

constexpr size_t kMaxVoters = 5;
// Servers in the group's configuration: the voters and, while one replaces another, the newcomer.
constexpr size_t kMaxServers = 8;
// Peers this member talks to at once (each a 64 KiB reassembly buffer): made when the first
// message goes to or comes from one; when full, one outside the configuration makes room.
constexpr size_t kMaxPeers = 8;
constexpr size_t kMaxLogEntries = 4096;   // the in-memory log's bound (appends past it fail)
constexpr size_t kMaxMessage = 64 * 1024; // the largest message taken from one peer
constexpr size_t kMaxPending = 128;       // sends and appends the engine may have in flight
constexpr size_t kMaxProposals = 32;      // commands proposed here and not yet applied
constexpr size_t kMaxCommand = 20 * 1024;
// Entries the engine puts in one AppendEntries (and has unacknowledged per follower): three of
// the largest commands fit one message.
constexpr unsigned kMaxInflightEntries = 3;
constexpr unsigned kHeartbeatMs = 30; // (the election timeout stays upstream's 1 s)
constexpr unsigned kElectionMs = 1000, kHastenedElectionMs = 300;
static_assert(kMaxInflightEntries * (kMaxCommand + 64) + 256 <= kMaxMessage);
// Upstream's defaults are 1,024 and 8,192; trailing must stay above the threshold (fewer makes
// defect 3 frequent) and the two together under kMaxLogEntries (the log peaks at their sum).
constexpr unsigned kSnapshotThreshold = 1024;
constexpr unsigned kSnapshotTrailing = 2048;
static_assert(kSnapshotThreshold < kSnapshotTrailing && kSnapshotThreshold + kSnapshotTrailing < kMaxLogEntries);

struct MemberStatus {
    uint64_t id, leader, term, commit, last_index;
    uint64_t entries;                              // in the log (from its start to last_index)
    uint64_t snapshot_index, snapshot_term;        // the newest snapshot (0: none)
    uint64_t snapshots_taken, snapshots_installed; // in this life: taken here, installed from a leader
    uint64_t applied;                              // commands applied to the state machine
    uint64_t applied_index;                        // the log index applied up to (the engine's)
    bool installing;                               // a leader's snapshot waits for install_ready()
    uint64_t applied_hash;                         // FNV-1a over every applied command, in order (same on every member)
    bool is_leader;
    // Leading, with a commit index that covers every entry of earlier terms: a read index may be
    // handed out (lib/raft/read_index.h).
    bool read_ready;
    uint8_t role;                     // raft_state(): 0 unavailable, 1 follower, 2 candidate, 3 leader
    uint64_t sent, received, refused; // datagrams; refused: failed authentication or checks
    // The group's configuration as this member knows it (the newest, committed or not): each
    // server's id and role (RAFT_VOTER, RAFT_STANDBY, RAFT_SPARE) and, at the leader, the highest
    // log index known replicated there (its own: last_index; 0 on a member that does not lead).
    struct Server {
        uint64_t id, match;
        uint8_t role;
    };
    Server servers[kMaxServers];
    uint8_t server_count;
    const Server* server(uint64_t id) const { // (nullptr: not in the configuration)
        for (uint8_t i = 0; i < server_count; ++i)
            if (servers[i].id == id)
                return &servers[i];
        return nullptr;
    }
    bool member; // this member is in that configuration (false: a joiner not yet added, or removed)
    // Told by a member of the group that it was removed while it was down (set_removed): it asks
    // for no votes until a leader replicates to it again.
    bool removed;
    // The last configuration change asked of this member (change()): 1 running, 0 done (or none),
    // else the engine's error code, negated.
    int change;
};

// A configuration change (one at a time, at the leader): a server added (as a spare), given
// another role, or removed.
enum class ChangeKind : uint8_t { Add, Assign, Remove };

// What the group's committed commands are applied to (the cluster task's replicated collections).
class StateMachine {
public:
    // A committed command, in log order, on every member (again, after a restart, for those after
    // the member's snapshot).
    virtual void apply(std::span<const uint8_t> command) = 0;
    // A command proposed here with `tag` will not be applied through that proposal (leadership
    // lost, or closing): whether another leader commits it is not known here.
    virtual void proposal_failed(uint64_t tag) = 0;
    // A snapshot from the leader replaced what this member had applied: the commands it covers
    // were never applied here.
    virtual void installed(uint64_t snapshot_index) = 0;
    // The leader (`from`) sent a snapshot of the group up to log index `index`: the member keeps it
    // off its disk (and the engine installing: no entries taken, no vote) until install_ready()
    // says the state it covers is here, so that a snapshot on the disk never names state that is
    // not. A state machine that is its applied count needs nothing (the default).
    virtual void install_begin(uint64_t index, uint64_t from) {
        (void)index;
        (void)from;
    }
    virtual bool install_ready() { return true; }
    // The state a snapshot carries besides the applied count and hash (a state machine whose
    // state lives elsewhere, like the store's collections, carries none): written into `out`
    // (kMaxMachineState bytes), its length.
    virtual size_t save(std::span<uint8_t> out) {
        (void)out;
        return 0;
    }
    // A snapshot's state, this member's own when it starts or the leader's when it installs one
    // (before installed()): false when it does not add up, and the snapshot is refused.
    virtual bool load(std::span<const uint8_t> state) { return state.empty(); }
    static constexpr size_t kMaxMachineState = 4096;

protected:
    ~StateMachine() = default;
};

class Member final : public raftlog::Target {
public:
    Member() = default;
    Member(const Member&) = delete;
    Member& operator=(const Member&) = delete;
    ~Member() { close(); }

    // Joins group `group` as `id` among `voters` (ids 1..; this member's among them): with the
    // state `disk` holds for the group, or else bootstrapping the group's configuration (every
    // member of a new group does, with the same voters). No voters: a joiner, which bootstraps
    // nothing and stays passive until a leader adds it (its configuration then comes from the
    // leader's log or snapshot). `epoch`: this life of the member (the wire orders messages by it:
    // a later life's must be larger). False if the engine refused.
    bool start(uint64_t group, uint64_t id, std::span<const uint64_t> voters, Link& link, Disk& disk, raftwire::Key key,
               uint64_t epoch);
    // Before start(): snapshot every `threshold` applied entries, keeping `trailing` behind it
    // (false, and nothing changed, unless 0 < threshold < trailing and their sum < kMaxLogEntries).
    bool set_snapshot_policy(unsigned threshold, unsigned trailing);
    // Before start(): this member stands first, its election timeout kHastenedElectionMs until a
    // leader is known (then upstream's 1 s): it wins its group's first election if it is up (a
    // collection's group led where it was created, whose caller's changes then skip a hop).
    void hasten_first_election() { m_hasten = true; }
    // What start() found on the disk (0 and 0: a new member).
    uint64_t recovered_term() const { return m_recovered_term; }
    uint64_t recovered_entries() const { return m_recovered_entries; }
    // One datagram from the network (anything: it is authenticated and checked first).
    void receive(std::span<const uint8_t> datagram);
    // Fires due ticks and completes the requests made since the last turn.
    void turn();
    // Proposes a command (kMaxCommand bytes at most) at this member: false unless it is the leader
    // and has room. Applied on every member once committed (applied/applied_hash).
    bool propose(std::span<const uint8_t> command, uint64_t tag = 0);
    // Before start(): where committed commands go besides the applied count and hash.
    void set_state_machine(StateMachine* sm) { m_sm = sm; }
    MemberStatus status() const;
    // A configuration change at this member, the leader: 0 started (its outcome in
    // status().change once committed), or the engine's refusal (RAFT_NOTLEADER, RAFT_CANTCHANGE:
    // another change is not committed yet, RAFT_BADROLE, RAFT_NOTFOUND, RAFT_DUPLICATEID, ...).
    // A voter's promotion waits for it to catch up (rounds of up to kCatchUpRoundMs).
    int change(ChangeKind kind, uint64_t id, int role = RAFT_VOTER);
    static constexpr unsigned kCatchUpRoundMs = 60'000;
    bool running() const { return m_raft != nullptr; }
    // The last server that asked this member for votes while removed from the group (see
    // note_outsider), once: 0 when none. The caller tells it so (set_removed on its side).
    uint64_t take_outsider();
    // A member of the group at `term` (not below this member's) says this one was removed.
    void set_removed(uint64_t term);
    // Leaves: every request in flight is cancelled and the engine's memory given back.
    void close();

    // ---- the raft_io and raft_fsm (the engine calls these through trampolines) ----
    int io_load(raft_term* term, raft_id* vote, raft_snapshot** snapshot, raft_index* start, raft_entry** entries,
                size_t* n);
    int io_start(unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv);
    int io_bootstrap(const raft_configuration* conf);
    int io_set_term(raft_term term);
    int io_set_vote(raft_id vote);
    int io_send(raft_io_send* req, const raft_message* m, raft_io_send_cb cb);
    int io_append(raft_io_append* req, const raft_entry* entries, unsigned n, raft_io_append_cb cb);
    int io_truncate(raft_index index);
    void io_close(raft_io_close_cb cb);
    int io_snapshot_put(unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                        raft_io_snapshot_put_cb cb);
    int io_snapshot_get(raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb);
    int fsm_apply(const raft_buffer* buf);
    int fsm_snapshot(raft_buffer* bufs[], unsigned* n);
    int fsm_restore(raft_buffer* buf);
    void proposal_done(struct raft_apply* req, int status);
    void change_done(int status) { m_change_result = status == 0 ? 0 : (status > 0 ? -status : status); }

    // ---- raftlog::Target: what the records rebuild ----
    uint64_t term() const override { return m_term; }
    uint64_t start() const override { return m_start; }
    uint64_t next_index() const override { return m_start + m_count; }
    bool set_term(uint64_t term, uint64_t vote) override;
    bool append(const raftlog::EntryView& e) override;
    bool truncate(uint64_t index) override;
    uint64_t snapshot_index() const override { return m_snap_index; }
    bool set_snapshot(const raftlog::SnapshotView& s, uint64_t start) override;

private:
    enum class Op : uint8_t { Send, Append, Put, Get };
    union Callback {
        raft_io_send_cb send;
        raft_io_append_cb append;
        raft_io_snapshot_put_cb put;
        raft_io_snapshot_get_cb get;
    };
    struct Pending { // a request the engine made, completed at a later turn
        Op op;
        void* req; // raft_io_send, raft_io_append, raft_io_snapshot_put or raft_io_snapshot_get
        Callback cb;
        uint64_t ticket;         // an append's or a put's: the commit that must be durable first
        raft_snapshot* snapshot; // a get's: read from the disk when asked (the engine takes it)
    };
    static Pending request(Op op, void* req, Callback cb, uint64_t ticket = 0, raft_snapshot* snapshot = nullptr) {
        return Pending { op, req, cb, ticket, snapshot };
    }
    struct Peer {
        uint64_t id;
        raftwire::Reassembler* in; // kernel heap, with its storage
    };

    // Written to the disk, then replayed here; *ticket (if asked) the commit that carries it.
    int apply_record(raftlog::Kind kind, std::span<const std::byte> payload, uint64_t* ticket = nullptr);
    int append_record(uint64_t index, const raftlog::EntryView* entries, unsigned n, uint64_t* ticket);
    bool load_state(); // the disk's state for the group replayed into this member
    // The group's stream from the disk, on the kernel heap (empty: none; false: unreadable).
    bool read_stream(std::span<std::byte>& out);
    bool queue(const Pending& p);
    void complete(const Pending& p, int status);
    // The group's snapshot on the disk, in the engine's form (nullptr: none, or no memory).
    raft_snapshot* read_snapshot();
    // The workaround of defect 3: an AppendEntries whose previous entry lies inside this member's
    // snapshot, before the entries it kept, rebased on the snapshot.
    void rebase_on_snapshot(raft_message& m);
    void complete_pending(int status);
    // The snapshot put held for install_ready(): written once it is (false: not yet, no room).
    bool write_held_install();
    int put_snapshot(unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                     raft_io_snapshot_put_cb cb);
    // The peer `id` (made when `make` and there is room or a peer outside the configuration to
    // give it up; nullptr otherwise).
    Peer* peer(uint64_t id, bool make);
    bool in_configuration(uint64_t id) const;
    // An AppendEntries cut before its first configuration change past its first entry: upstream
    // records a change under the index of the message's first entry (the leader resends the rest).
    static void cut_before_change(raft_message& m);

    raft* m_raft = nullptr;
    raft_io m_io {};
    raft_fsm m_fsm {};
    Link* m_link = nullptr;
    Disk* m_disk = nullptr;
    uint64_t m_recovered_term = 0, m_recovered_entries = 0;
    raftwire::Key m_key {};
    uint64_t m_group = 0, m_id = 0, m_epoch = 0;
    char m_address[24] = "";
    Peer m_peers[kMaxPeers] {};
    size_t m_peer_count = 0;
    // Messages sent in this life, to any peer: each peer's receiver needs them in increasing
    // order only, and one counter keeps that when a peer is dropped and made again.
    uint64_t m_seq = 0;
    struct raft_change m_change {};
    int m_change_result = 0;
    uint64_t m_lead_term = 0, m_lead_floor = 0; // the term this member leads in, its log's end then
    bool m_hasten = false;                      // hasten_first_election(), until a leader is known
    uint64_t m_outsider = 0;                    // see take_outsider()
    bool m_removed = false;
    void note_outsider(uint64_t id, uint64_t last_log_index);
    // The "disk": term, vote, and the log from index 1.
    raft_term m_term = 0;
    raft_id m_vote = 0;
    size_t m_count = 0;   // entries in the log, from m_start
    uint64_t m_start = 1; // the log's first index
    uint64_t m_snap_index = 0, m_snap_term = 0;
    // The newest configuration changes in the log (oldest first): a snapshot taken here names the
    // newest one it covers. Upstream names the configuration committed so far, and a change applied
    // in the same batch of entries as the snapshot is committed only by an event handled after it,
    // so its snapshot would name an older one: after a restart the change stays uncommitted forever
    // (no configuration change is ever taken again) and a follower installing it takes the old one.
    static constexpr size_t kTrackedChanges = 4, kMaxConfigurationBytes = 512;
    struct Change {
        uint64_t index;
        size_t len;
        std::byte bytes[kMaxConfigurationBytes];
    };
    Change m_changes[kTrackedChanges] {};
    size_t m_change_count = 0;
    uint64_t m_reconfigured = 0; // snapshots whose configuration was corrected so
    unsigned m_threshold = kSnapshotThreshold, m_trailing = kSnapshotTrailing;
    uint64_t m_taken = 0, m_installed = 0;
    struct HeldInstall { // a leader's snapshot the state machine is not ready for yet
        raft_io_snapshot_put* req;
        const raft_snapshot* snapshot; // the engine's, alive until the put completes
        raft_io_snapshot_put_cb cb;
    };
    HeldInstall m_held {};
    bool m_running = false; // raft_start() returned: a restore now is an install
    bool m_closing = false;
    Pending m_pending[kMaxPending] {};
    size_t m_pending_count = 0;
    raft_io_tick_cb m_tick = nullptr;
    raft_io_recv_cb m_recv = nullptr;
    unsigned m_tick_ms = 100;
    uint64_t m_last_tick_ms = 0;
    struct raft_apply m_proposals[kMaxProposals] {};
    bool m_proposal_busy[kMaxProposals] = {};
    uint64_t m_proposal_tags[kMaxProposals] = {};
    StateMachine* m_sm = nullptr;
    // Inside raft_apply: the engine hands the command's buffer to the log (and frees it) before it
    // calls io_truncate/io_append, so a failed proposal that reached them must not free it again.
    bool m_proposing = false, m_command_taken = false;
    uint64_t m_applied = 0, m_applied_hash = 0xcbf29ce484222325ull;
    uint64_t m_sent = 0, m_received = 0, m_refused = 0;
    uint8_t* m_scratch = nullptr; // one encoded message on its way out (kMaxMessage)
};

} // namespace kraft

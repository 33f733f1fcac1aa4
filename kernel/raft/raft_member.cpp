#include "raft_member.h"

#include "../clock.h"
#include "../mm/kheap.h"
#include "../rng.h"

#include <cstring>
#include <new>

#include <raft/log_image.h>

#include "raft_stream_reader.h"
#include <ktl/decimal.h>

// The compatibility layer queues the callbacks of completed client requests; the raft_io fires
// them once per turn of its loop (upstream's libuv backend does so in its prepare and check
// handles). Internal to upstream (src/legacy.h), hence declared here.
extern "C" void LegacyFireCompletedRequests(struct raft* r);

namespace kraft {
namespace {

Member& of(raft_io* io) { return *static_cast<Member*>(io->impl); }
Member& of(raft_fsm* fsm) { return *static_cast<Member*>(fsm->data); }

int cb_init(raft_io*, raft_id, const char*) { return 0; }
void cb_close(raft_io* io, raft_io_close_cb cb) { of(io).io_close(cb); }
int cb_load(raft_io* io, raft_term* t, raft_id* v, raft_snapshot** s, raft_index* i, raft_entry** e, size_t* n) {
    return of(io).io_load(t, v, s, i, e, n);
}
int cb_start(raft_io* io, unsigned ms, raft_io_tick_cb tick, raft_io_recv_cb recv) {
    return of(io).io_start(ms, tick, recv);
}
int cb_bootstrap(raft_io* io, const raft_configuration* conf) { return of(io).io_bootstrap(conf); }
int cb_recover(raft_io*, const raft_configuration*) { return RAFT_NOTFOUND; }
int cb_set_term(raft_io* io, raft_term term) { return of(io).io_set_term(term); }
int cb_set_vote(raft_io* io, raft_id id) { return of(io).io_set_vote(id); }
int cb_send(raft_io* io, raft_io_send* req, const raft_message* m, raft_io_send_cb cb) {
    return of(io).io_send(req, m, cb);
}
int cb_append(raft_io* io, raft_io_append* req, const raft_entry e[], unsigned n, raft_io_append_cb cb) {
    return of(io).io_append(req, e, n, cb);
}
int cb_truncate(raft_io* io, raft_index index) { return of(io).io_truncate(index); }
int cb_snapshot_put(raft_io* io, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* s,
                    raft_io_snapshot_put_cb cb) {
    return of(io).io_snapshot_put(trailing, req, s, cb);
}
int cb_snapshot_get(raft_io* io, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) {
    return of(io).io_snapshot_get(req, cb);
}
raft_time cb_time(raft_io*) { return clock::monotonic_ns() / 1000000; }
int cb_random(raft_io*, int min, int max) {
    uint32_t r = 0;
    rng::fill(&r, sizeof r);
    return max > min ? min + static_cast<int>(r % static_cast<uint32_t>(max - min)) : min;
}
int cb_apply(raft_fsm* fsm, const raft_buffer* buf, void** result) {
    *result = nullptr;
    return of(fsm).fsm_apply(buf);
}
int cb_snapshot(raft_fsm* fsm, raft_buffer** bufs, unsigned* n) { return of(fsm).fsm_snapshot(bufs, n); }
int cb_restore(raft_fsm* fsm, raft_buffer* buf) { return of(fsm).fsm_restore(buf); }
void cb_applied(struct raft_apply* req, int status, void*) {
    static_cast<Member*>(req->data)->proposal_done(req, status);
}
void cb_changed(struct raft_change* req, int status) { static_cast<Member*>(req->data)->change_done(status); }
void cb_closed(raft*) {}

uint64_t now_ms() { return clock::monotonic_ns() / 1000000; }


// The engine wants an address per server; the wire names peers by id, so "raft-<id>" it is.
void format_address(uint64_t id, char (&out)[24]) {
    char digits[20];
    size_t len = 0;
    for (const char c : { 'r', 'a', 'f', 't', '-' })
        out[len++] = c;
    for (const char c : ktl::format_decimal(id, digits))
        if (len + 1 < sizeof out)
            out[len++] = c;
    out[len] = '\0';
}

} // namespace

bool Member::start(uint64_t group, uint64_t id, std::span<const uint64_t> voters, Link& link, Disk& disk,
                   raftwire::Key key, uint64_t epoch) {
    if (m_raft || voters.size() > kMaxVoters || id == 0)
        return false;
    m_group = group;
    m_id = id;
    m_epoch = epoch;
    m_link = &link;
    m_disk = &disk;
    // A member started again restores its snapshot and applies the committed commands after it.
    m_applied = 0;
    m_applied_hash = 0xcbf29ce484222325ull;
    m_taken = m_installed = 0;
    m_running = m_closing = false;
    m_key = key;
    auto scratch = kheap::alloc(kMaxMessage);
    if (!scratch)
        return false;
    m_scratch = static_cast<uint8_t*>(*scratch);
    m_term = m_vote = 0;
    m_count = 0;
    m_start = 1;
    m_change_count = 0;
    m_snap_index = m_snap_term = 0;
    if (!load_state()) {
        close();
        return false;
    }
    m_recovered_term = m_term;
    m_recovered_entries = m_count;
    m_peer_count = 0;
    m_seq = 0;
    m_change_result = 0;
    format_address(id, m_address);
    m_io = raft_io {};
    m_io.version = 1;
    m_io.capacity = 0xffff; // KiB the engine may count on for entries (it refuses writes below 4 MiB)
    m_io.impl = this;
    m_io.init = cb_init;
    m_io.close = cb_close;
    m_io.load = cb_load;
    m_io.start = cb_start;
    m_io.bootstrap = cb_bootstrap;
    m_io.recover = cb_recover;
    m_io.set_term = cb_set_term;
    m_io.set_vote = cb_set_vote;
    m_io.send = cb_send;
    m_io.append = cb_append;
    m_io.truncate = cb_truncate;
    m_io.snapshot_put = cb_snapshot_put;
    m_io.snapshot_get = cb_snapshot_get;
    m_io.time = cb_time;
    m_io.random = cb_random;
    m_fsm = raft_fsm {};
    m_fsm.version = 1;
    m_fsm.data = this;
    m_fsm.apply = cb_apply;
    m_fsm.snapshot = cb_snapshot;
    m_fsm.restore = cb_restore;
    auto mem = kheap::alloc(sizeof(raft));
    if (!mem) {
        close();
        return false;
    }
    m_raft = new (*mem) raft {};
    if (raft_init(m_raft, &m_io, &m_fsm, id, m_address) != 0) {
        kheap::free(m_raft);
        m_raft = nullptr;
        close();
        return false;
    }
    m_raft->tracer = nullptr; // no formatting of trace messages nobody reads
    raft_set_pre_vote(m_raft, true);
    raft_set_election_timeout(m_raft, m_hasten ? kHastenedElectionMs : kElectionMs);
    // Followers learn that an entry is committed from the leader's next message: a heartbeat this
    // often bounds what a read barrier at a follower waits for it (upstream's 100 ms ticks, and
    // heartbeats, made a follower's linearizable read take 200 ms).
    raft_set_heartbeat_timeout(m_raft, kHeartbeatMs);
    raft_set_snapshot_threshold(m_raft, m_threshold);
    raft_set_max_inflight_entries(m_raft, kMaxInflightEntries);
    raft_set_snapshot_trailing(m_raft, m_trailing);
    // A newcomer's catch-up round may include a snapshot install, which waits for the collections
    // it covers to be fetched (upstream's 5 s would abort the promotion).
    raft_set_max_catch_up_round_duration(m_raft, kCatchUpRoundMs);
    raft_configuration conf;
    raft_configuration_init(&conf);
    bool ok = true;
    for (uint64_t v : voters) {
        char address[24];
        format_address(v, address);
        ok = ok && raft_configuration_add(&conf, v, address, RAFT_VOTER) == 0;
    }
    // A member with a log of its own takes it up: the log holds the configuration already. (One
    // whose first boot ended between its term and its configuration has a term and no log: it
    // bootstraps, or no member of a group that lost power at its first boot could ever vote.)
    // (A joiner bootstraps nothing: the configuration that names it comes from the leader.)
    if (m_count == 0 && m_snap_index == 0 && !voters.empty())
        ok = ok && raft_bootstrap(m_raft, &conf) == 0;
    raft_configuration_close(&conf);
    ok = ok && raft_start(m_raft) == 0;
    if (!ok) {
        close();
        return false;
    }
    m_running = true;
    m_last_tick_ms = now_ms();
    return true;
}

bool Member::in_configuration(uint64_t id) const {
    if (!m_raft)
        return false;
    for (unsigned i = 0; i < m_raft->configuration.n; ++i)
        if (m_raft->configuration.servers[i].id == id)
            return true;
    return false;
}

Member::Peer* Member::peer(uint64_t id, bool make) {
    for (size_t i = 0; i < m_peer_count; ++i)
        if (m_peers[i].id == id)
            return &m_peers[i];
    if (!make || id == 0 || id == m_id)
        return nullptr;
    Peer* slot = nullptr;
    if (m_peer_count < kMaxPeers) {
        auto mem = kheap::alloc(sizeof(raftwire::Reassembler) + kMaxMessage);
        if (!mem)
            return nullptr;
        auto* storage = static_cast<uint8_t*>(*mem) + sizeof(raftwire::Reassembler);
        slot = &m_peers[m_peer_count++];
        slot->in = new (*mem) raftwire::Reassembler({ storage, kMaxMessage });
    } else {
        // Full: a peer the configuration no longer names (a removed server, a stranger that
        // spoke) gives its place up; its half-assembled message is dropped.
        for (size_t i = 0; i < m_peer_count && !slot; ++i)
            if (!in_configuration(m_peers[i].id))
                slot = &m_peers[i];
        if (!slot)
            return nullptr;
        raftwire::Reassembler* in = slot->in;
        void* mem = in;
        in->~Reassembler();
        in = new (mem)
            raftwire::Reassembler({ static_cast<uint8_t*>(mem) + sizeof(raftwire::Reassembler), kMaxMessage });
        slot->in = in;
    }
    slot->id = id;
    return slot;
}

void Member::cut_before_change(raft_message& m) {
    raft_append_entries& a = m.append_entries;
    for (unsigned k = 1; k < a.n_entries; ++k)
        if (a.entries[k].type == RAFT_CHANGE) {
            a.n_entries = k; // (the entries share one batch, freed through the first)
            return;
        }
}

void Member::receive(std::span<const uint8_t> datagram) {
    if (!m_raft || !m_recv)
        return;
    raftwire::FrameHeader h;
    std::span<const uint8_t> slice;
    Peer* from = nullptr;
    // (Any sender the cluster key authenticates: a newcomer's leader may not be in its
    // configuration yet, and a removed server still speaks until it learns it was removed.)
    if (raftwire::open(datagram, m_key, h, slice) != raftwire::Verdict::Accepted || h.group != m_group ||
        h.to != m_id || !(from = peer(h.from, true))) {
        ++m_refused;
        return;
    }
    ++m_received;
    if (from->in->feed(h, slice) != raftwire::Reassembler::Result::Complete)
        return;
    raft_message m {};
    if (raftwire::decode(from->in->message(), m) != raftwire::Verdict::Accepted) {
        ++m_refused;
        return;
    }
    // (And while one is being installed: the engine returns early then and frees nothing of it.)
    if (m.type == RAFT_INSTALL_SNAPSHOT && (m_raft->legacy.snapshot_taking || m_raft->snapshot.installing)) {
        raftwire::release(m); // (see the header: the leader sends it again)
        return;
    }
    if (m.type == RAFT_APPEND_ENTRIES) {
        rebase_on_snapshot(m);
        cut_before_change(m);
    }
    if (m.type == RAFT_APPEND_ENTRIES || m.type == RAFT_INSTALL_SNAPSHOT)
        m_removed = false; // a leader replicates to it: it is in a configuration again
    if (m.type == RAFT_REQUEST_VOTE)
        note_outsider(h.from, m.request_vote.last_log_index);
    m.server_id = h.from;
    m.server_address = "raft-peer"; // the engine reads it only to learn a leader's address
    m_recv(&m_io, &m);              // the engine owns what decode allocated
}

// A server that asks for votes, is in none of this member's configurations, and whose log stops
// before the configuration committed without it: a voter removed while it was down (the engine
// leaves it asking forever). A server added later has that configuration in its log, so a member
// that lags behind its addition never takes it for removed.
void Member::note_outsider(uint64_t id, uint64_t last_log_index) {
    const raft_configuration& c = m_raft->configuration;
    for (unsigned i = 0; i < c.n; ++i)
        if (c.servers[i].id == id)
            return;
    if (m_raft->configuration_committed_index != 0 && last_log_index < m_raft->configuration_committed_index)
        m_outsider = id;
}

uint64_t Member::take_outsider() {
    const uint64_t id = m_outsider;
    m_outsider = 0;
    return id;
}

void Member::set_removed(uint64_t term) {
    if (m_raft && term >= m_term && raft_state(m_raft) != RAFT_LEADER)
        m_removed = true;
}

void Member::turn() {
    if (!m_raft)
        return;
    const uint64_t now = now_ms();
    if (m_tick && now - m_last_tick_ms >= m_tick_ms) {
        m_last_tick_ms = now;
        m_tick(&m_io);
    }
    if (m_held.req)
        (void)write_held_install();
    complete_pending(0);
    LegacyFireCompletedRequests(m_raft);
    // The read index's condition (lib/raft/read_index.h): every entry of an earlier term is in the
    // log when this member becomes leader, so a commit index at the log's end as it was then
    // covers them (upstream appends its no-op of the new term at that moment).
    if (m_hasten) {
        raft_id leader = 0;
        const char* address = nullptr;
        raft_leader(m_raft, &leader, &address);
        if (leader != 0) { // (this member, or another that stood first)
            m_hasten = false;
            raft_set_election_timeout(m_raft, kElectionMs);
        }
    }
    if (raft_state(m_raft) != RAFT_LEADER) {
        m_lead_term = 0;
    } else if (m_lead_term != m_term) {
        m_lead_term = m_term;
        m_lead_floor = next_index() - 1;
    }
}

bool Member::propose(std::span<const uint8_t> command, uint64_t tag) {
    if (!m_raft || command.size() > kMaxCommand || raft_state(m_raft) != RAFT_LEADER)
        return false;
    size_t slot = 0;
    while (slot < kMaxProposals && m_proposal_busy[slot])
        ++slot;
    if (slot == kMaxProposals)
        return false;
    raft_buffer buf;
    buf.len = command.size();
    buf.base = raft_malloc(buf.len ? buf.len : 1);
    if (!buf.base)
        return false;
    if (!command.empty())
        std::memcpy(buf.base, command.data(), command.size());
    struct raft_apply* req = &m_proposals[slot];
    *req = {};
    req->data = this;
    m_proposing = true;
    m_command_taken = false;
    const int rv = raft_apply(m_raft, req, &buf, 1, cb_applied);
    m_proposing = false;
    if (rv != 0) {
        if (!m_command_taken)
            raft_free(buf.base);
        return false;
    }
    m_proposal_busy[slot] = true;
    m_proposal_tags[slot] = tag;
    return true;
}

void Member::proposal_done(struct raft_apply* req, int status) {
    for (size_t i = 0; i < kMaxProposals; ++i)
        if (&m_proposals[i] == req) {
            m_proposal_busy[i] = false;
            if (status != 0 && m_sm)
                m_sm->proposal_failed(m_proposal_tags[i]);
        }
}

MemberStatus Member::status() const {
    MemberStatus s {};
    s.id = m_id;
    s.applied = m_applied;
    s.applied_hash = m_applied_hash;
    s.sent = m_sent;
    s.received = m_received;
    s.refused = m_refused;
    s.term = m_term;
    s.last_index = next_index() - 1;
    s.entries = m_count;
    s.snapshot_index = m_snap_index;
    s.snapshot_term = m_snap_term;
    s.snapshots_taken = m_taken;
    s.snapshots_installed = m_installed;
    if (m_raft) {
        raft_id leader = 0;
        const char* address = nullptr;
        raft_leader(m_raft, &leader, &address);
        s.leader = leader;
        s.commit = raft_commit_index(m_raft);
        s.applied_index = raft_last_applied(m_raft);
        s.installing = m_held.req != nullptr;
        s.is_leader = raft_state(m_raft) == RAFT_LEADER;
        s.read_ready = s.is_leader && m_lead_term == m_term && s.commit >= m_lead_floor;
        s.removed = m_removed;
        const raft_configuration& c = m_raft->configuration;
        for (unsigned i = 0; i < c.n && s.server_count < kMaxServers; ++i) {
            MemberStatus::Server& out = s.servers[s.server_count++];
            out.id = c.servers[i].id;
            out.role = static_cast<uint8_t>(c.servers[i].role);
            raft_index index = 0;
            out.match = !s.is_leader                                    ? 0
                        : out.id == m_id                                ? s.last_index
                        : raft_match_index(m_raft, out.id, &index) == 0 ? index
                                                                        : 0;
            s.member = s.member || out.id == m_id;
        }
        s.change = m_change_result;
        s.role = static_cast<uint8_t>(raft_state(m_raft));
    }
    return s;
}

int Member::change(ChangeKind kind, uint64_t id, int role) {
    if (!m_raft)
        return RAFT_NOTLEADER;
    if (raft_state(m_raft) != RAFT_LEADER)
        return RAFT_NOTLEADER; // (upstream only asserts it for add and remove)
    if (m_change_result == 1)
        return RAFT_CANTCHANGE;
    m_change = {};
    m_change.data = this;
    char address[24];
    format_address(id, address);
    int rv = RAFT_INVALID;
    switch (kind) {
    case ChangeKind::Add: rv = raft_add(m_raft, &m_change, id, address, cb_changed); break;
    case ChangeKind::Assign: rv = raft_assign(m_raft, &m_change, id, role, cb_changed); break;
    case ChangeKind::Remove: rv = raft_remove(m_raft, &m_change, id, cb_changed); break;
    }
    if (rv == 0)
        m_change_result = 1;
    return rv;
}

void Member::close() {
    if (m_raft) {
        raft_close(m_raft, cb_closed); // io_close cancels what is in flight (synchronous here)
        kheap::free(m_raft);
        m_raft = nullptr;
    }
    for (size_t i = 0; i < m_peer_count; ++i) {
        m_peers[i].in->~Reassembler();
        kheap::free(m_peers[i].in);
    }
    m_peer_count = 0;

    if (m_scratch)
        kheap::free(m_scratch);
    m_scratch = nullptr;
}

// ---- raft_io ----------------------------------------------------------------------------------

int Member::io_load(raft_term* term, raft_id* vote, raft_snapshot** snapshot, raft_index* start, raft_entry** entries,
                    size_t* n) {
    *term = m_term;
    *vote = m_vote;
    *snapshot = nullptr;
    *start = m_start;
    *entries = nullptr;
    *n = 0;
    if (m_count == 0 && m_snap_index == 0)
        return 0;
    // The engine takes the snapshot, the array and each entry's batch.
    std::span<std::byte> stream;
    if (!read_stream(stream))
        return RAFT_IOERR;
    auto* out = m_count ? static_cast<raft_entry*>(raft_calloc(m_count, sizeof(raft_entry))) : nullptr;
    StreamReader reader(out, out ? m_count : 0);
    const bool room = out || m_count == 0;
    const bool ok = room && raftlog::replay_stream(stream, m_group, reader) == ktl::Error::None &&
                    reader.count() == m_count && reader.start() == m_start && reader.snapshot_index() == m_snap_index;
    if (!stream.empty())
        kheap::free(stream.data());
    if (!ok) {
        reader.release();
        raft_free(out);
        return room ? RAFT_CORRUPT : RAFT_NOMEM;
    }
    reader.keep_entries();
    *snapshot = reader.take_snapshot();
    *entries = out;
    *n = m_count;
    return 0;
}

int Member::io_start(unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) {
    m_tick_ms = msecs ? msecs : 1;
    m_tick = tick;
    m_recv = recv;
    return 0;
}

int Member::io_bootstrap(const raft_configuration* conf) {
    if (m_count != 0 || m_snap_index != 0 || m_term > 1)
        return RAFT_CANTBOOTSTRAP;
    raft_buffer buf {};
    if (raft_configuration_encode(conf, &buf) != 0)
        return RAFT_NOMEM;
    const raftlog::EntryView first { 1, RAFT_CHANGE, { static_cast<const std::byte*>(buf.base), buf.len } };
    int rv = m_term == 0 ? io_set_term(1) : 0;
    uint64_t ticket = 0;
    if (rv == 0)
        rv = append_record(1, &first, 1, &ticket);
    raft_free(buf.base);
    // The configuration is durable before the group runs (a restart finds it, not an empty log).
    return rv == 0 && ticket && !m_disk->wait(ticket) ? RAFT_IOERR : rv;
}

// Term and vote: durable before the engine acts on them (a vote given twice in one term, after a
// restart, would let two leaders be elected).
int Member::io_set_term(raft_term term) {
    std::byte record[raftlog::kTermBytes];
    auto n = raftlog::encode_term(record, m_group, term, 0);
    uint64_t ticket = 0;
    const int rv = n ? apply_record(raftlog::Kind::Term, { record, *n }, &ticket) : RAFT_INVALID;
    return rv == 0 && ticket && !m_disk->wait(ticket) ? RAFT_IOERR : rv;
}

int Member::io_set_vote(raft_id vote) {
    std::byte record[raftlog::kTermBytes];
    auto n = raftlog::encode_term(record, m_group, m_term, vote);
    uint64_t ticket = 0;
    const int rv = n ? apply_record(raftlog::Kind::Term, { record, *n }, &ticket) : RAFT_INVALID;
    return rv == 0 && ticket && !m_disk->wait(ticket) ? RAFT_IOERR : rv;
}

int Member::io_send(raft_io_send* req, const raft_message* message, raft_io_send_cb cb) {
    const raft_message* m = message;
    if (m_removed && m->type == RAFT_REQUEST_VOTE) {
        // Told it was removed: its elections disturb nobody (the request completes as if lost).
        Callback done {};
        done.send = cb;
        return queue(request(Op::Send, req, done)) ? 0 : RAFT_NOMEM;
    }
    raft_message corrected;
    if (m->type == RAFT_INSTALL_SNAPSHOT && m_snap_index && m->install_snapshot.last_index == m_snap_index &&
        m->install_snapshot.last_term != m_snap_term) {
        // Defect 1: the engine moved last_index to the snapshot it read back and kept the term of
        // the one it meant; the snapshot is this member's own, so its term is known.
        corrected = *m;
        corrected.install_snapshot.last_term = m_snap_term;
        m = &corrected;
    }
    Peer* to = peer(m->server_id, true);
    const size_t len = to ? raftwire::encode(*m, { m_scratch, kMaxMessage }) : 0;
    if (len == 0)
        return RAFT_IOERR; // an unknown peer, or a message over the largest a peer takes
    Callback done {};
    done.send = cb;
    if (!queue(request(Op::Send, req, done)))
        return RAFT_NOMEM;
    if (m_closing)
        return 0; // (a snapshot read completed at close: its message is cancelled, not sent)
    raftwire::FrameHeader h;
    h.group = m_group;
    h.from = m_id;
    h.to = to->id;
    h.epoch = m_epoch;
    h.seq = ++m_seq;
    h.fragments = static_cast<uint16_t>(raftwire::fragment_count(len));
    h.total = static_cast<uint32_t>(len);
    uint8_t datagram[raftwire::kMaxDatagram];
    for (uint16_t f = 0; f < h.fragments; ++f) {
        h.fragment = f;
        const size_t n = raftwire::seal(h, { m_scratch, len }, m_key, datagram);
        if (n == 0)
            break;
        m_link->send(to->id, { datagram, n });
        ++m_sent;
    }
    return 0;
}

int Member::io_append(raft_io_append* req, const raft_entry* entries, unsigned n, raft_io_append_cb cb) {
    m_command_taken = m_command_taken || m_proposing;
    if (n == 0 || m_count + n > kMaxLogEntries)
        return RAFT_NOSPACE;
    auto mem = kheap::alloc(sizeof(raftlog::EntryView) * n);
    if (!mem)
        return RAFT_NOMEM;
    auto* views = static_cast<raftlog::EntryView*>(*mem);
    for (unsigned i = 0; i < n; ++i)
        views[i] = { entries[i].term,
                     static_cast<uint8_t>(entries[i].type),
                     { static_cast<const std::byte*>(entries[i].buf.base), entries[i].buf.len } };
    // Room for its completion first: an append written cannot be taken back from the disk.
    if (m_pending_count == kMaxPending) {
        kheap::free(views);
        return RAFT_NOMEM;
    }
    uint64_t ticket = 0;
    const int rv = append_record(next_index(), views, n, &ticket);
    kheap::free(views);
    if (rv != 0)
        return rv;
    Callback done {};
    done.append = cb;
    (void)queue(request(Op::Append, req, done, ticket));
    return 0;
}

int Member::io_truncate(raft_index index) {
    m_command_taken = m_command_taken || m_proposing;
    std::byte record[raftlog::kTruncateBytes];
    auto n = raftlog::encode_truncate(record, m_group, index);
    return n ? apply_record(raftlog::Kind::Truncate, { record, *n }) : RAFT_INVALID;
}

void Member::io_close(raft_io_close_cb cb) {
    // A snapshot read's completion sends its message, which is cancelled in the next pass.
    m_closing = true;
    if (m_held.req) { // (upstream takes a failed install only as this cancellation)
        const HeldInstall held = m_held;
        m_held = HeldInstall {};
        held.cb(held.req, RAFT_CANCELED);
    }
    for (int pass = 0; pass < 3 && m_pending_count; ++pass)
        complete_pending(RAFT_CANCELED);
    m_tick = nullptr;
    m_recv = nullptr;
    cb(&m_io);
}

int Member::fsm_apply(const raft_buffer* buf) {
    const auto* p = static_cast<const uint8_t*>(buf->base);
    for (size_t i = 0; i < buf->len; ++i) {
        m_applied_hash ^= p[i];
        m_applied_hash *= 0x100000001b3ull;
    }
    m_applied_hash ^= buf->len; // command boundaries count
    m_applied_hash *= 0x100000001b3ull;
    ++m_applied;
    if (m_sm)
        m_sm->apply({ p, buf->len });
    return 0;
}

// ---- the in-memory log and the requests in flight ----------------------------------------------

// One record: written to the disk, then replayed into this member's own state, as recovery will
// replay it.
int Member::apply_record(raftlog::Kind kind, std::span<const std::byte> payload, uint64_t* ticket) {
    auto d = raftlog::decode(kind, payload);
    if (!d || d->group != m_group)
        return RAFT_IOERR;
    const int64_t written = m_disk->write(kind, payload);
    if (written < 0)
        return written == -static_cast<int64_t>(ktl::Error::NoMemory) ? RAFT_NOMEM : RAFT_IOERR;
    if (ticket)
        *ticket = static_cast<uint64_t>(written);
    const ktl::Error e = raftlog::replay(*d, *this);
    return e == ktl::Error::None ? 0 : e == ktl::Error::NoMemory ? RAFT_NOMEM : RAFT_IOERR;
}

bool Member::read_stream(std::span<std::byte>& out) {
    out = {};
    const int64_t bytes = m_disk->load(m_group, {}, 0);
    if (bytes <= 0)
        return bytes == 0;
    auto mem = kheap::alloc(static_cast<size_t>(bytes));
    if (!mem)
        return false;
    std::span<std::byte> stream(static_cast<std::byte*>(*mem), static_cast<size_t>(bytes));
    for (size_t at = 0; at < stream.size();) {
        const size_t n = stream.size() - at < Disk::kLoadWindow ? stream.size() - at : Disk::kLoadWindow;
        if (m_disk->load(m_group, stream.subspan(at, n), at) != static_cast<int64_t>(n)) {
            kheap::free(*mem);
            return false;
        }
        at += n;
    }
    out = stream;
    return true;
}

bool Member::load_state() {
    std::span<std::byte> stream;
    if (!read_stream(stream))
        return false;
    const bool ok = raftlog::replay_stream(stream, m_group, *this) == ktl::Error::None;
    if (!stream.empty())
        kheap::free(stream.data());
    return ok;
}

int Member::append_record(uint64_t index, const raftlog::EntryView* entries, unsigned n, uint64_t* ticket) {
    const size_t bytes = raftlog::append_bytes({ entries, n });
    if (bytes == 0)
        return RAFT_TOOBIG;
    auto mem = kheap::alloc(bytes);
    if (!mem)
        return RAFT_NOMEM;
    std::span<std::byte> record(static_cast<std::byte*>(*mem), bytes);
    auto encoded = raftlog::encode_append(record, m_group, index, { entries, n });
    const int rv = encoded ? apply_record(raftlog::Kind::Append, record.first(*encoded), ticket) : RAFT_INVALID;
    kheap::free(*mem);
    return rv;
}

bool Member::set_term(uint64_t term, uint64_t vote) {
    m_term = term;
    m_vote = vote;
    return true;
}

bool Member::append(const raftlog::EntryView& e) {
    if (m_count >= kMaxLogEntries)
        return false;
    if (e.type == RAFT_CHANGE) {
        if (m_change_count == kTrackedChanges) {
            for (size_t i = 1; i < kTrackedChanges; ++i)
                m_changes[i - 1] = m_changes[i];
            --m_change_count;
        }
        if (e.data.size() <= kMaxConfigurationBytes) {
            Change& c = m_changes[m_change_count++];
            c.index = next_index();
            c.len = e.data.size();
            std::memcpy(c.bytes, e.data.data(), e.data.size());
        } else {
            m_change_count = 0; // (one that cannot be kept: none older may stand for it)
        }
    }
    ++m_count;
    return true;
}

bool Member::truncate(uint64_t index) {
    m_count = index - m_start; // (replay checked start <= index <= next_index)
    while (m_change_count > 0 && m_changes[m_change_count - 1].index >= index)
        --m_change_count;
    return true;
}

bool Member::set_snapshot(const raftlog::SnapshotView& s, uint64_t start) {
    const uint64_t end = next_index();
    m_count = start < end ? end - start : 0;
    m_start = start;
    // Changes before the log's new start are gone with it (a snapshot taken here named the newest
    // it covered when it was written; an installed one replaced them).
    size_t kept = 0;
    for (size_t i = 0; i < m_change_count; ++i)
        if (m_changes[i].index >= start)
            m_changes[kept++] = m_changes[i];
    m_change_count = kept;
    m_snap_index = s.index;
    m_snap_term = s.term;
    return true;
}

bool Member::queue(const Pending& p) {
    if (m_pending_count == kMaxPending)
        return false;
    m_pending[m_pending_count++] = p;
    return true;
}

// In the order they were made; an append or a snapshot write only once its commit is durable
// (and so every later one waits too: tickets only grow). A callback may make new requests: those
// wait for the next turn. status != 0 (closing): everything, with that status, but a snapshot
// read (defect 2: the engine's error path for it frees what it never owned).
void Member::complete_pending(int status) {
    const size_t n = m_pending_count;
    size_t kept = 0;
    bool held = false;
    for (size_t i = 0; i < n; ++i) {
        const Pending p = m_pending[i];
        int result = status;
        if (status == 0 && p.ticket != 0 && !held) {
            const int64_t d = m_disk->durable(p.ticket);
            held = d == 0;
            result = d < 0 ? RAFT_IOERR : 0;
        }
        if (status == 0 && held && (p.op == Op::Append || p.op == Op::Put)) {
            m_pending[kept++] = p;
            continue;
        }
        complete(p, result);
    }
    // (Requests made by the callbacks were queued after the first n.)
    std::memmove(m_pending + kept, m_pending + n, (m_pending_count - n) * sizeof(Pending));
    m_pending_count = kept + (m_pending_count - n);
}

void Member::complete(const Pending& p, int status) {
    switch (p.op) {
    case Op::Send: p.cb.send(static_cast<raft_io_send*>(p.req), status); break;
    case Op::Append: p.cb.append(static_cast<raft_io_append*>(p.req), status); break;
    case Op::Put: p.cb.put(static_cast<raft_io_snapshot_put*>(p.req), status); break;
    case Op::Get: p.cb.get(static_cast<raft_io_snapshot_get*>(p.req), p.snapshot, 0); break;
    }
}

} // namespace kraft

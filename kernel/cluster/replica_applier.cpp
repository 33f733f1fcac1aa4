#include "replica_applier.h"

#include "cluster_service.h"
#include "consensus_group.h"
#include "store_retry.h"

#include "../log.h"
#include <abi/replication.h>
#include <abi/sys.h>
#include <abi/vector.h>

#include <storage/records.h>

#include <cstring>

#include <ktl/le_bytes.h>

namespace clusterd {
namespace {

using abi::repl::kHeader;
using abi::repl::kLengthAt;
using abi::repl::kMaxCommand;
using abi::repl::kOriginAt;
using abi::repl::kReadBarrier;
using abi::repl::kTicketAt;
using abi::repl::kTypeAt;
using abi::repl::kZeroAt;
static_assert(kMaxCommand <= kraft::kMaxCommand); // the member proposes what the desk hands out
static_assert(ReplicaApplier::kMaxCreate >= kHeader + storage::kCreateRecordBytes);
alignas(8) std::byte g_command[kMaxCommand];
bool g_missing[abi::kMaxDeleteIds]; // the last delete's ids not found (one task: one change at a time)

using ktl::get_le;
uint64_t ptr(const void* p) { return reinterpret_cast<uint64_t>(p); }
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

// The desk's command header (abi/replication.h) before a command this applier makes itself.
void put_header(uint8_t* out, uint64_t origin, uint64_t ticket, uint16_t type, size_t length) {
    auto* b = reinterpret_cast<std::byte*>(out);
    ktl::put_le<uint64_t>(b + kOriginAt, origin);
    ktl::put_le<uint64_t>(b + kTicketAt, ticket);
    ktl::put_le<uint16_t>(b + kTypeAt, type);
    ktl::put_le<uint16_t>(b + kZeroAt, 0);
    ktl::put_le<uint32_t>(b + kLengthAt, static_cast<uint32_t>(length));
}

// An entry that changes nothing (a read barrier without a name: every voter skips it as it applies
// it), proposed at the leader: a term's first entry, or a commit beacon.
bool propose_noop(kraft::Member& member) {
    alignas(8) uint8_t noop[kHeader];
    put_header(noop, 0, 0, kReadBarrier, 0);
    return member.propose({ noop, sizeof noop }, 0);
}

} // namespace

ReplicaApplier::ReplicaApplier() : m_command(g_command), m_missing(g_missing) {}

void ReplicaApplier::configure(uint32_t group, uint32_t (*ip_of)(uint64_t), Router router, Dropped dropped,
                               Teller teller) {
    m_group = group;
    m_teller = teller;
    m_ip_of = ip_of;
    m_places = group == 0;
    m_router = router;
    m_dropped = dropped;
}

bool ReplicaApplier::start(uint32_t store, uint32_t log, uint32_t voters, uint64_t origin, StateTransfer& transfer,
                           bool serve) {
    m_transfer = &transfer;
    m_store = store;
    m_log = log;
    m_origin = origin;
    return !serve || sys::repl_serve(log, voters, origin) == 0;
}

namespace {

// The collection a desk's command names (a change's record starts with it; a read barrier's is it).
std::string_view command_name(std::span<const uint8_t> command) {
    const uint16_t type = static_cast<uint16_t>(get_le(command.data() + kTypeAt, 2));
    const std::span<const uint8_t> record = command.subspan(kHeader);
    if (type == kReadBarrier)
        return { reinterpret_cast<const char*>(record.data()), record.size() };
    if (record.empty() || record[0] == 0 || record.size() < size_t(1) + record[0])
        return {};
    return { reinterpret_cast<const char*>(record.data() + 1), record[0] };
}

// An upsert or a delete: the changes a node without a copy carries to the collection's voters.
bool row_change(uint16_t type) {
    return type == uint16_t(storage::RecordType::Upsert) || type == uint16_t(storage::RecordType::Delete);
}

} // namespace

void ReplicaApplier::pump(kraft::Member& member, PeerChannel& forwarder, uint64_t now_ns) {
    const kraft::MemberStatus s = member.status();
    const bool leader = s.is_leader;
    const uint64_t forward_to = leader ? 0 : s.leader;
    propose_forgets(member, forwarder);
    // A bounded batch per round (the desk's slots).
    for (size_t i = 0; i < kInFlight; ++i) {
        const int64_t n = sys::repl_take(m_log, m_command, kMaxCommand, leader ? 1 : forward_to ? 2 : 0);
        if (n <= 0)
            break;
        const std::span<const uint8_t> command(reinterpret_cast<const uint8_t*>(m_command), static_cast<size_t>(n));
        const uint64_t ticket = get_le(command.data() + kTicketAt, 8);
        const uint16_t type = static_cast<uint16_t>(get_le(command.data() + kTypeAt, 2));
        const std::string_view name = command_name(command);
        const raftdir::Entry* placed = m_places && !name.empty() ? directory().find(name) : nullptr;
        InFlight* slot = free_slot();
        if (!placed && slot && type == uint16_t(storage::RecordType::Create) &&
            place_first(member, forwarder, s, command, *slot, now_ns))
            continue; // (answered already when it could not be placed)
        // A change of a collection placed on other nodes only (its caller holds a stand-in): carried
        // to one of its voters, answered when the group tells how it went.
        if (placed && m_router && !placed->has_voter(self_ip()) && row_change(type)) {
            if (const ktl::Error r = carry_outside(*placed, forwarder, command, now_ns); r != ktl::Error::None) {
                ++m_counters.refused;
                sys::repl_done(m_log, ticket, err(r), nullptr, 0);
            }
            continue;
        }
        ktl::Error refused = ktl::Error::WouldBlock;
        Route route {};
        bool chain = !placed && type == kReadBarrier;
        if (placed && m_router) // (its group's member runs here: this node is one of its voters)
            refused = m_router(placed->group, route)
                          ? route.applier->take(*route.member, *route.forwarder, command, now_ns)
                          : ktl::Error::NotVoter;
        else
            refused = take(member, forwarder, command, now_ns);
        // A read of a collection placed here whose group does not run yet or has no leader (its
        // member just started: placed a moment ago, or every voter restarted) waits in group 0 and
        // is handed over when that group can take it, up to the time limit.
        if (placed && type == kReadBarrier && (refused == ktl::Error::NotVoter || refused == ktl::Error::NotLeader) &&
            placed->has_voter(self_ip())) {
            refused = take(member, forwarder, command, now_ns);
            chain = true;
        }
        if (refused != ktl::Error::None) {
            ++m_counters.refused;
            sys::repl_done(m_log, ticket, err(refused), nullptr, 0);
            continue;
        }
        // A read of a name not placed here yet: once group 0's index is applied, its placement (if it
        // was made before the read) is known, and the read goes on through the collection's group.
        for (size_t k = 0; m_router && k < kInFlight && chain && command.size() <= kMaxCreate; ++k)
            if (m_in_flight[k].ticket == ticket) {
                std::memcpy(m_creates[k], command.data(), command.size());
                m_in_flight[k].create_length = static_cast<uint16_t>(command.size());
            }
    }
    service(member, forwarder, now_ns);
}

ktl::Error ReplicaApplier::take(kraft::Member& member, PeerChannel& forwarder, std::span<const uint8_t> command,
                                uint64_t now_ns) {
    const kraft::MemberStatus s = member.status();
    const bool leader = s.is_leader;
    const uint64_t forward_to = leader ? 0 : s.leader;
    if (!leader && forward_to == 0)
        return ktl::Error::NotLeader;
    InFlight* slot = free_slot();
    if (!slot)
        return ktl::Error::WouldBlock;
    const uint64_t ticket = get_le(command.data() + kTicketAt, 8);
    const bool read = get_le(command.data() + kTypeAt, 2) == kReadBarrier;
    const bool taken = read ? (leader ? m_reads.ask(s.id, ticket)
                                      : send_read(forwarder, forward_to, { raftread::kAsk, ticket, 0, 0 }))
                            : submit(member, forwarder, forward_to, command, ticket);
    if (!taken)
        return ktl::Error::WouldBlock;
    *slot = InFlight { ticket, now_ns, forward_to, read, 0, Phase::Change, 0 };
    if (!read)
        ++(leader ? m_counters.proposed : m_counters.forwarded_out);
    return ktl::Error::None;
}

void ReplicaApplier::service(kraft::Member& member, PeerChannel& forwarder, uint64_t now_ns) {
    const kraft::MemberStatus s = member.status();
    // A new leader's commit covers its predecessors' entries only once an entry of its own term
    // commits, and upstream appends none when a term starts: with reads waiting (and no change
    // coming), one that changes nothing is proposed, once a term.
    // Group 0's proposes it whenever a term starts: a node's directory is behind until then (its
    // entries after the snapshot are not applied), and its changes would be refused as they apply.
    if (s.is_leader && !s.read_ready && (m_places || m_reads.waiting() != 0) && m_noop_term != s.term) {
        if (propose_noop(member))
            m_noop_term = s.term;
    }
    // The commit beacon: a follower learns that an entry is committed from the leader's next message
    // to it, a heartbeat up to 30 ms away; its caller waits for that (60 ms a change at a follower
    // against 6 at the leader). An entry that changes nothing, proposed once a round in which a
    // follower's change was applied here, goes out at once with the new commit index. (Ticks
    // outside their time are no way to send it: upstream's leader timeout resets each follower's
    // "heard from recently" and drops followers it has not heard from since out of pipelining and
    // snapshots.)
    if (m_beacon && s.is_leader && propose_noop(member))
        ++m_counters.beacons;
    m_beacon = false;
    const uint64_t forward_to = s.is_leader ? 0 : s.leader;
    submit_placed(member, forwarder, now_ns);
    serve_reads(s, forwarder, now_ns);
    tell_outcomes(s);
    // A read not answered within a second is asked again (a datagram lost either way). A change
    // forwarded to a leader this follower no longer follows (it died, or lost an election) is
    // answered at once: whether that leader committed it before is not known here. (A read whose
    // index that leader handed out only waits for this voter's log.)
    for (auto& f : m_in_flight) {
        if (f.ticket && f.read && f.phase == Phase::Change && f.to != 0 && f.to == forward_to && f.index == 0 &&
            now_ns - (f.asked_ns ? f.asked_ns : f.since_ns) > kAskAgainNs &&
            send_read(forwarder, f.to, { raftread::kAsk, f.ticket, 0, 0 }))
            f.asked_ns = now_ns;
        if (f.ticket && (now_ns - f.since_ns > kTimeoutNs ||
                         (f.to != 0 && f.to != forward_to && f.index == 0 && f.phase != Phase::Placed &&
                          f.phase != Phase::Outside && !(told() && f.phase == Phase::Placing)))) {
            ++m_counters.timed_out;
            // The voter a change from outside went to said nothing: the next change goes to the next one.
            const raftdir::Entry* e = f.phase == Phase::Outside ? directory().find_group(f.group) : nullptr;
            for (uint8_t i = 0; e && i < e->voter_count; ++i)
                if (e->voters[i] == m_ip_of(f.to))
                    remember_voter(f.group, e->voters[(i + 1) % e->voter_count]);
            answer(f.ticket, err(ktl::Error::TimedOut));
            f = InFlight {};
        }
    }
}

bool ReplicaApplier::submit(kraft::Member& member, PeerChannel& forwarder, uint64_t forward_to,
                            std::span<const uint8_t> command, uint64_t ticket) {
    return forward_to == 0 ? member.propose(command, ticket) : forwarder.send(forward_to, command);
}

ReplicaApplier::InFlight* ReplicaApplier::free_slot() {
    for (auto& f : m_in_flight)
        if (f.ticket == 0)
            return &f;
    return nullptr;
}

void ReplicaApplier::remember_voter(uint32_t group, uint32_t ip) {
    for (Hint& h : m_hints)
        if (h.group == group) {
            h.ip = ip;
            return;
        }
    m_hints[m_next_hint++ % kHints] = Hint { group, ip };
}

ktl::Error ReplicaApplier::carry_outside(const raftdir::Entry& e, PeerChannel& forwarder,
                                         std::span<const uint8_t> command, uint64_t now_ns) {
    InFlight* slot = free_slot();
    if (!slot)
        return ktl::Error::WouldBlock;
    // The voter that answered last for the group; at first its creator, which leads it while it is up.
    // One the membership protocol holds suspect or dead is passed over for the next that is alive.
    uint32_t ip = e.voters[0];
    for (const Hint& h : m_hints)
        if (h.group == e.group && e.has_voter(h.ip))
            ip = h.ip;
    uint8_t first = 0;
    while (first < e.voter_count && e.voters[first] != ip)
        ++first;
    for (uint8_t k = 0; k < e.voter_count; ++k) {
        const uint32_t candidate = e.voters[(first + k) % e.voter_count];
        uint8_t state = 0;
        uint64_t for_ns = 0;
        if (member_state(candidate, state, for_ns) && state == 0) {
            ip = candidate;
            break;
        }
    }
    const uint64_t to = consensus_id_of(ip);
    if (!forwarder.send(to, command))
        return ktl::Error::WouldBlock;
    *slot = InFlight { get_le(command.data() + kTicketAt, 8), now_ns, to, false, 0, Phase::Outside, 0 };
    slot->group = e.group;
    ++m_counters.forwarded_out;
    return ktl::Error::None;
}

bool ReplicaApplier::relay(kraft::Member& member, PeerChannel& forwarder, std::span<const uint8_t> command) {
    const kraft::MemberStatus s = member.status();
    return (s.is_leader || s.leader != 0) && submit(member, forwarder, s.is_leader ? 0 : s.leader, command, 0);
}

void ReplicaApplier::outcome(std::span<const uint8_t> message) {
    const auto o = raftout::decode(message, { m_missing, abi::kMaxDeleteIds });
    if (!o || o->origin != m_origin) { // (one of an earlier boot of this node's: its callers are gone)
        ++m_counters.refused;
        return;
    }
    for (auto& f : m_in_flight)
        if (f.ticket == o->ticket && f.phase == Phase::Outside) {
            if (o->leader != 0)
                remember_voter(f.group, o->leader);
            settle(f.ticket, o->result, o->absent);
            return;
        }
}

void ReplicaApplier::keep_outcome(uint64_t origin, uint64_t ticket, int64_t result, std::span<const bool> absent) {
    const auto ip = static_cast<uint32_t>(origin >> 32);
    for (size_t i = 0; i < m_voter_count; ++i)
        if (m_voter_ips[i] == ip)
            return; // (a voter's own change: it answers its caller as it applies it)
    for (Told& t : m_told)
        if (t.length == 0) {
            const size_t n = raftout::encode({ origin, ticket, result, self_ip(), absent }, t.message);
            t.ip = ip;
            t.length = static_cast<uint16_t>(n);
            return;
        }
}

void ReplicaApplier::tell_outcomes(const kraft::MemberStatus& s) {
    m_voter_count = 0;
    for (uint8_t i = 0; i < s.server_count && m_voter_count < kraft::kMaxServers; ++i)
        if (s.servers[i].role == RAFT_VOTER)
            m_voter_ips[m_voter_count++] = m_ip_of(s.servers[i].id);
    for (Told& t : m_told) {
        if (t.length != 0 && s.is_leader && m_teller)
            (void)m_teller(t.ip, { t.message, t.length });
        t.length = 0;
    }
}

bool ReplicaApplier::place_first(kraft::Member& member, PeerChannel& forwarder, const kraft::MemberStatus& s,
                                 std::span<const uint8_t> command, InFlight& slot, uint64_t now_ns) {
    const uint8_t* h = command.data();
    if (!m_places || !m_ip_of || get_le(h + kTypeAt, 2) != uint16_t(storage::RecordType::Create) ||
        command.size() > kMaxCreate)
        return false;
    const auto d = storage::decode_record(uint16_t(storage::RecordType::Create),
                                          { m_command + kHeader, static_cast<size_t>(command.size() - kHeader) });
    if (!d || directory().find(d->name))
        return false; // (a create that does not decode is refused by every voter as it applies it)
    // Its voters: the creating node first (this one: its changes carry its address), then among
    // every member the membership protocol holds alive, in group 0 or not (those outside it learn
    // their placement from group 0's leader: raftdir notices); with groups of its own off, group
    // 0's voters.
    const uint64_t ticket = get_le(h + kTicketAt, 8);
    uint32_t live[cluster_abi::kFedMaxNodes], voters[raftdir::kMaxVoters];
    size_t count = 0;
    if (m_router) {
        count = live_members({ live, cluster_abi::kFedMaxNodes });
    } else {
        for (uint8_t i = 0; i < s.server_count; ++i)
            if (s.servers[i].role == RAFT_VOTER)
                live[count++] = m_ip_of(s.servers[i].id);
    }
    const uint8_t replicas = static_cast<uint8_t>((d->create.flags & abi::kCreateReplicasMask) >>
                                                  abi::kCreateReplicasShift);
    auto chosen = directory().choose(self_ip(), { live, count }, replicas, voters);
    if (!chosen && chosen.error() == ktl::Error::Full)
        chosen = ktl::Error::OutOfRange; // (fewer live members can take it than asked: too_many_replicas)
    alignas(8) uint8_t place[kHeader + raftdir::kPlaceHeader + 4 * raftdir::kMaxVoters + raftdir::kMaxNameLength];
    const raftdir::Place p { d->name, { voters, replicas }, d->create.dim };
    const size_t length = raftdir::place_bytes(p);
    put_header(place, get_le(h + kOriginAt, 8), ticket, raftdir::kPlace, length); // (the create's origin and ticket)
    if (!chosen || !raftdir::encode(p, { reinterpret_cast<std::byte*>(place + kHeader), length })) {
        ++m_counters.refused;
        sys::repl_done(m_log, ticket, err(chosen ? ktl::Error::InvalidArgs : chosen.error()), nullptr, 0);
        return true;
    }
    const uint64_t forward_to = leader_of(s);
    if (!(s.is_leader || forward_to) || !submit(member, forwarder, forward_to, { place, kHeader + length }, ticket)) {
        ++m_counters.refused;
        sys::repl_done(m_log, ticket, err(s.is_leader || forward_to ? ktl::Error::WouldBlock : ktl::Error::NotLeader),
                       nullptr, 0);
        return true;
    }
    const size_t index = static_cast<size_t>(&slot - m_in_flight);
    std::memcpy(m_creates[index], h, command.size());
    slot = InFlight { ticket, now_ns, forward_to, false, 0, Phase::Placing, static_cast<uint16_t>(command.size()) };
    ++m_counters.placements;
    return true;
}

ktl::Error ReplicaApplier::hand_over(size_t i, std::string_view name, uint64_t now_ns) {
    const raftdir::Entry* e = directory().find(name);
    Route route {};
    if (!e || !m_router || !m_router(e->group, route))
        return ktl::Error::NotLeader; // (its group starts here in this round: asked again next round)
    return route.applier->take(*route.member, *route.forwarder, { m_creates[i], m_in_flight[i].create_length }, now_ns);
}

void ReplicaApplier::submit_placed(kraft::Member& member, PeerChannel& forwarder, uint64_t now_ns) {
    const kraft::MemberStatus s = member.status();
    const uint64_t forward_to = s.is_leader ? 0 : s.leader;
    for (size_t i = 0; i < kInFlight; ++i) {
        InFlight& f = m_in_flight[i];
        if (f.ticket == 0 || f.phase != Phase::Placed)
            continue;
        const std::span<const uint8_t> create(m_creates[i], f.create_length);
        if (!m_router) { // (raft_groups=0: group 0 carries the collection)
            if (!(s.is_leader || forward_to) || !submit(member, forwarder, forward_to, create, f.ticket)) {
                ++m_counters.refused;
                settle(f.ticket, err(s.is_leader || forward_to ? ktl::Error::WouldBlock : ktl::Error::NotLeader));
                continue;
            }
            f.phase = Phase::Change;
            f.to = forward_to;
            ++(s.is_leader ? m_counters.proposed : m_counters.forwarded_out);
            continue;
        }
        const ktl::Error r = hand_over(i, command_name(create), now_ns);
        if (r == ktl::Error::None) {
            f = InFlight {}; // (the collection's group answers it)
        } else if (r != ktl::Error::NotLeader) {
            ++m_counters.refused;
            settle(f.ticket, err(r));
        } // (no leader yet in a new group: waited for, up to the time limit)
    }
}

void ReplicaApplier::forget_later(uint32_t group, std::string_view name, uint64_t ticket, int64_t result) {
    for (auto& f : m_forgets)
        if (f.group == 0) {
            f = Forget {};
            f.group = group;
            f.name_length = static_cast<uint8_t>(name.size() < sizeof f.name ? name.size() : sizeof f.name);
            std::memcpy(f.name, name.data(), f.name_length);
            f.since_ns = sys::clock();
            f.ticket = ticket;
            f.result = result;
            return;
        }
    KLOG_WARN("cluster: group %u's placement is not forgotten (too many at once): it stays in the directory", group);
    if (ticket)
        sys::repl_done(m_log, ticket, result, nullptr, 0);
}

void ReplicaApplier::forgotten(uint32_t group) {
    for (auto& f : m_forgets)
        if (f.group == group) {
            if (f.ticket)
                sys::repl_done(m_log, f.ticket, f.result, nullptr, 0);
            f = Forget {};
        }
}

void ReplicaApplier::reassign_later(uint32_t group, uint32_t dead, uint32_t with) {
    for (auto& r : m_reassigns)
        if (r.group == 0) {
            r = { group, dead, with };
            return;
        }
}

// Each waits until it can be proposed or forwarded (a minute at most: then its placement stays,
// and a collection created again under its name goes back to that group).
void ReplicaApplier::propose_forgets(kraft::Member& member, PeerChannel& forwarder) {
    const kraft::MemberStatus s = member.status();
    const uint64_t forward_to = leader_of(s);
    // (Proposed by the leader that replaced the voter: lost with its leadership, as the replacement's
    // own last step would be.)
    for (auto& r : m_reassigns) {
        if (r.group == 0)
            continue;
        alignas(8) uint8_t command[kHeader + raftdir::kReassignBytes];
        put_header(command, m_origin, 0, raftdir::kReassign, raftdir::kReassignBytes);
        const bool encoded = raftdir::encode(r, { reinterpret_cast<std::byte*>(command + kHeader),
                                                  raftdir::kReassignBytes });
        if (!encoded || !s.is_leader || member.propose({ command, sizeof command }, 0))
            r = raftdir::Reassign {};
    }
    for (auto& f : m_forgets) {
        if (f.group == 0)
            continue;
        alignas(8) uint8_t command[kHeader + raftdir::kForgetHeader + raftdir::kMaxNameLength] = {};
        const raftdir::Forget forget { f.group, { f.name, f.name_length } };
        const size_t length = raftdir::forget_bytes(forget);
        put_header(command, m_origin, f.ticket, raftdir::kForget, length);
        const bool encoded = raftdir::encode(forget, { reinterpret_cast<std::byte*>(command + kHeader), length });
        const uint64_t now = sys::clock();
        // Sent again each second until this node applies it (a forwarded one may be lost; a second
        // one applied finds nothing to forget).
        if (encoded && (s.is_leader || forward_to) && (f.sent_ns == 0 || now - f.sent_ns > 1'000'000'000ull) &&
            submit(member, forwarder, forward_to, { command, kHeader + length }, 0))
            f.sent_ns = now;
        if (f.ticket && now - f.since_ns > kTimeoutNs) { // (whether it will be forgotten is not known)
            sys::repl_done(m_log, f.ticket, err(ktl::Error::TimedOut), nullptr, 0);
            f.ticket = 0;
        }
        if (!encoded || now - f.since_ns > 60'000'000'000ull) {
            KLOG_WARN("cluster: group %u's placement could not be forgotten: it stays in the directory", f.group);
            f = Forget {};
        }
    }
}


bool ReplicaApplier::send_read(PeerChannel& channel, uint64_t to, const raftread::Message& m) {
    uint8_t buf[raftread::kMessageBytes];
    const size_t n = raftread::encode(m, buf);
    return n != 0 && channel.send(to, { buf, n });
}

void ReplicaApplier::serve_reads(const kraft::MemberStatus& s, PeerChannel& channel, uint64_t now_ns) {
    uint64_t voters[kraft::kMaxServers];
    size_t count = 0;
    for (uint8_t i = 0; i < s.server_count; ++i)
        if (s.servers[i].role == RAFT_VOTER)
            voters[count++] = s.servers[i].id;
    const raftread::View view { s.id, s.term, s.commit, s.is_leader, s.read_ready, { voters, count } };
    raftread::LeaderReads::Answer answers[kInFlight];
    raftread::LeaderReads::Probe probe;
    const raftread::LeaderReads::Counters before = m_reads.counters();
    const size_t n = m_reads.turn(view, now_ns, answers, probe);
    m_counters.read_rounds += m_reads.counters().rounds - before.rounds;
    if (probe.round != 0)
        for (size_t i = 0; i < count; ++i)
            if (voters[i] != s.id)
                (void)send_read(channel, voters[i], { raftread::kProbe, 0, probe.round, probe.term });
    for (size_t i = 0; i < n; ++i) {
        const auto& a = answers[i];
        if (a.reader == s.id)
            read_indexed(a.ticket, 0, a.index);
        else
            (void)send_read(channel, a.reader, { raftread::kAnswer, a.ticket, a.index, 0 });
    }
    // Every change committed before the read arrived at the leader is at or below its index.
    for (size_t i = 0; i < kInFlight; ++i) {
        InFlight& f = m_in_flight[i];
        if (!f.ticket || !f.read || f.index == 0 || s.applied_index < f.index)
            continue;
        // Group 0's read of a name it now knows placed: the collection's group's read follows
        // (when that group runs here: its member may start a round later, or be electing).
        const std::span<const uint8_t> kept(m_creates[i], f.create_length);
        const raftdir::Entry* e = m_places && f.create_length != 0 ? m_directory.find(command_name(kept)) : nullptr;
        if (e && e->has_voter(self_ip())) {
            if (hand_over(i, command_name(kept), now_ns) == ktl::Error::None)
                f = InFlight {};
            continue; // (else tried again next round; the time limit ends it)
        }
        ++m_counters.reads;
        settle(f.ticket, 1);
    }
}

void ReplicaApplier::read_indexed(uint64_t ticket, uint64_t from, uint64_t index) {
    for (auto& f : m_in_flight)
        if (f.ticket == ticket && f.read && f.to == from && f.index == 0) {
            if (index != 0) {
                f.index = index;
            } else { // the leader could not confirm it (it no longer leads, or had no room)
                ++m_counters.timed_out;
                settle(ticket, err(ktl::Error::TimedOut));
            }
            return;
        }
}

void ReplicaApplier::read_message(kraft::Member& member, PeerChannel& channel,
                                  const std::optional<raftread::Message>& m, uint64_t from) {
    if (!m) {
        ++m_counters.refused;
        return;
    }
    switch (m->type) {
    case raftread::kAsk: // a follower's read: refused at once unless this member leads and has room
        if (!member.status().is_leader || !m_reads.ask(from, m->ticket))
            (void)send_read(channel, from, { raftread::kAnswer, m->ticket, 0, 0 });
        break;
    case raftread::kProbe: // the leader's round: this voter's term says whether a later leader exists
        (void)send_read(channel, from, { raftread::kAck, 0, m->a, member.status().term });
        break;
    case raftread::kAck: m_reads.ack(from, m->a, m->b); break;
    case raftread::kAnswer: read_indexed(m->ticket, from, m->a); break;
    case raftread::kRemoved: break; // (the cluster task's: consensus.cpp)
    }
}

bool ReplicaApplier::forwarded(kraft::Member& member, std::span<const uint8_t> command) {
    // Its header must add up and name a change of the store; the record itself is checked by every
    // voter as it applies it.
    const bool formed = command.size() >= kHeader && command.size() <= kMaxCommand &&
                        get_le(command.data() + kZeroAt, 2) == 0 &&
                        get_le(command.data() + kLengthAt, 4) == command.size() - kHeader;
    const uint16_t type = formed ? static_cast<uint16_t>(get_le(command.data() + kTypeAt, 2)) : 0;
    const bool change = (type >= uint16_t(storage::RecordType::Create) &&
                         type <= uint16_t(storage::RecordType::Delete)) ||
                        (m_places && (type == raftdir::kPlace || type == raftdir::kForget));
    // From a node that holds no copy of a collection placed in a group of its own: to that group.
    const raftdir::Entry* placed = m_places && m_router && row_change(type) ? directory().find(command_name(command))
                                                                            : nullptr;
    if (placed) {
        Route route {};
        const bool sent = m_router(placed->group, route) &&
                          route.applier->relay(*route.member, *route.forwarder, command);
        ++(sent ? m_counters.forwarded_in : m_counters.refused);
        return sent;
    }
    if (!change || !member.status().is_leader || !member.propose(command, 0)) {
        ++m_counters.refused; // (the follower's caller learns it from its timeout)
        return false;
    }
    ++m_counters.forwarded_in;
    return true;
}

uint64_t ReplicaApplier::leader_of(const kraft::MemberStatus& s) const {
    return s.is_leader ? 0 : s.leader ? s.leader : told() ? m_heard_from : 0;
}

void ReplicaApplier::follow_heard() {
    if (!told())
        return;
    for (size_t i = 0; i < kInFlight; ++i) {
        InFlight& f = m_in_flight[i];
        if (f.ticket && f.phase == Phase::Placing &&
            m_heard.find(command_name({ m_creates[i], f.create_length })) != nullptr)
            f.phase = Phase::Placed; // (its create goes to the collection's group next)
    }
    for (const auto& f : m_forgets)
        if (f.group != 0 && m_heard.find_group(f.group) == nullptr)
            forgotten(f.group);
}

void ReplicaApplier::set_outsider(bool outsider) {
    if (outsider == m_outsider)
        return;
    m_outsider = outsider;
    ++m_directory_changes; // (the directory routed by is another)
}

bool ReplicaApplier::heard(std::span<const uint8_t> notice, uint64_t from) {
    raftdir::Directory d;
    const auto version = raftdir::take_notice(notice, d);
    if (!m_places || !version || (m_heard_version != 0 && *version <= m_heard_version))
        return false; // (not newer than the last taken)
    m_heard_version = *version;
    m_heard = d;
    m_heard_from = from;
    follow_heard();
    ++m_directory_changes;
    return true;
}

void ReplicaApplier::settle(uint64_t ticket, int64_t result, std::span<const bool> absent) {
    for (auto& f : m_in_flight)
        if (f.ticket == ticket) {
            answer(ticket, result, absent);
            f = InFlight {};
            return;
        }
}

namespace {

// Reads other nodes asked this voter to confirm (peer_read): their tickets have the top bit, which
// the desk's (counted from 1 in a boot) never reach.
constexpr uint64_t kPeerTicket = 1ull << 63;
constexpr uint64_t kForgottenNs = 60'000'000'000ull;
struct PeerRead {
    uint64_t ticket; // 0: free
    uint64_t since_ns;
    bool ended;
    int64_t result;
};
PeerRead g_peer_reads[8];
uint64_t g_peer_next = 0;

PeerRead* peer_entry(uint64_t handle) {
    for (auto& p : g_peer_reads)
        if (handle != 0 && p.ticket == (handle | kPeerTicket))
            return &p;
    return nullptr;
}

} // namespace

void ReplicaApplier::answer(uint64_t ticket, int64_t result, std::span<const bool> absent) {
    if ((ticket & kPeerTicket) == 0) {
        sys::repl_done(m_log, ticket, result, absent.data(), absent.size());
        return;
    }
    for (auto& p : g_peer_reads)
        if (p.ticket == ticket) {
            p.ended = true;
            p.result = result;
        }
}

ktl::Result<uint64_t> ReplicaApplier::peer_read(kraft::Member& member, PeerChannel& forwarder, std::string_view name,
                                                uint64_t now_ns) {
    PeerRead* free = nullptr;
    for (auto& p : g_peer_reads) {
        if (p.ticket && now_ns - p.since_ns > kForgottenNs)
            p = PeerRead {}; // (its asker went away, or its group here with it)
        if (!p.ticket && !free)
            free = &p;
    }
    if (!free || name.empty() || name.size() > raftdir::kMaxNameLength)
        return ktl::Error::WouldBlock;
    alignas(8) uint8_t command[kHeader + raftdir::kMaxNameLength];
    const uint64_t ticket = kPeerTicket | ++g_peer_next;
    put_header(command, m_origin, ticket, kReadBarrier, name.size());
    std::memcpy(command + kHeader, name.data(), name.size());
    const ktl::Error r = take(member, forwarder, { command, kHeader + name.size() }, now_ns);
    if (r != ktl::Error::None)
        return r;
    *free = PeerRead { ticket, now_ns, false, 0 };
    return ticket & ~kPeerTicket;
}

void ReplicaApplier::peer_read_cancel(uint64_t handle) {
    if (PeerRead* p = peer_entry(handle))
        *p = PeerRead {}; // (an answer that still comes finds no entry: dropped)
}

int64_t ReplicaApplier::peer_read_state(uint64_t handle) {
    PeerRead* p = peer_entry(handle);
    if (!p)
        return err(ktl::Error::NotFound);
    if (!p->ended)
        return 0;
    const int64_t r = p->result;
    *p = PeerRead {};
    return r;
}

void ReplicaApplier::proposal_failed(uint64_t tag) {
    if (tag == 0)
        return; // a follower's change: its own timeout answers it
    ++m_counters.timed_out;
    settle(tag, err(ktl::Error::TimedOut)); // (it may still be committed by another leader)
}

void ReplicaApplier::install_begin(uint64_t index, uint64_t from) {
    if (m_transfer)
        m_transfer->begin(index, from, sys::clock());
}

// Without a transfer (no store here) the snapshot goes in as it is: what it covers is missing.
bool ReplicaApplier::install_ready() { return !m_transfer || m_transfer->ready(); }

void ReplicaApplier::installed(uint64_t applied) {
    ++m_counters.installs;
    if (m_transfer && m_transfer->ready() && !m_transfer->incomplete()) {
        m_transfer->finished();
        KLOG_INFO("cluster: this voter installed the group's snapshot (%llu commands) with the replicated "
                  "collections it covers",
                  static_cast<unsigned long long>(applied));
        return;
    }
    if (m_transfer)
        m_transfer->finished();
    KLOG_ERROR("cluster: this voter installed the leader's snapshot (%llu commands) without all its collections: "
               "replicated changes it covers are missing here",
               static_cast<unsigned long long>(applied));
}

void ReplicaApplier::apply(std::span<const uint8_t> command) {
    if (command.size() < kHeader) {
        ++m_counters.failed;
        return;
    }
    const uint8_t* h = command.data();
    const uint64_t origin = get_le(h, 8), ticket = get_le(h + kTicketAt, 8), length = get_le(h + kLengthAt, 4);
    const uint16_t type = static_cast<uint16_t>(get_le(h + kTypeAt, 2));
    int64_t result = err(ktl::Error::Corrupt);
    if (type == kReadBarrier && length == command.size() - kHeader)
        return; // (a read barrier an earlier version logged: nothing to change, nobody waits for it)
    const bool formed = get_le(h + kZeroAt, 2) == 0 && length == command.size() - kHeader &&
                        length <= kMaxCommand - kHeader;
    if (formed) // Copied to an aligned buffer: the record's ids and vectors are read in place.
        std::memcpy(m_command, command.data() + kHeader, length);
    if (type >= raftdir::kPlace && type <= raftdir::kReassign) {
        result = formed && m_places ? apply_directory(type, { m_command, static_cast<size_t>(length) })
                                    : err(ktl::Error::Corrupt);
        if (origin == m_origin && type == raftdir::kForget && formed) {
            if (const auto f = raftdir::decode_forget({ m_command, static_cast<size_t>(length) }))
                forgotten(f->group);
        } else if (origin == m_origin) {
            placed(ticket, result);
        }
        return;
    }
    const bool drop = type == uint16_t(storage::RecordType::Drop);
    // Refused alike by every voter (WouldBlock: nothing changed, try again; a create or drop tries
    // again by itself, an upsert or delete answers busy): a create of the name after its drop (it
    // goes to the next placement), or
    // a placed collection's change that reached group 0's log (routed by a node whose directory was
    // behind; one collection's changes in two logs could be ordered differently).
    const bool refused = formed && (m_closed || placed_in_own_group({ m_command, static_cast<size_t>(length) }));
    if (refused)
        result = err(ktl::Error::WouldBlock);
    else if (formed)
        result = apply_record(type, { m_command, static_cast<size_t>(length) });
    if (!m_places && formed && drop && !m_closed) {
        m_closed = true;
        // Dropped at this node's caller's request: group 0 forgets the placement, then it is answered.
        if (m_dropped && origin == m_origin && result >= 0) {
            for (auto& f : m_in_flight)
                if (f.ticket == ticket)
                    f = InFlight {};
            const auto* record = reinterpret_cast<const uint8_t*>(m_command);
            m_dropped(m_group, { reinterpret_cast<const char*>(record + 1), record[0] }, ticket, result);
            ++m_counters.applied;
            return;
        }
    }
    if (refused) {
        ++m_counters.refused;
    } else if (result < 0) {
        ++m_counters.failed;
        KLOG_WARN("cluster: a replicated change (record type %u) was not applied here: %s", type,
                  ktl::error_name(static_cast<ktl::Error>(-result)));
    } else {
        ++m_counters.applied;
    }
    // Another voter's change (forwarded to this leader): that voter answers its caller once it has
    // applied it, which waits until it learns the commit; the next round's beacon tells it at once.
    if (formed && origin != 0 && static_cast<uint32_t>(origin >> 32) != self_ip())
        for (size_t i = 0; i < m_voter_count && !m_beacon; ++i)
            m_beacon = m_voter_ips[i] == static_cast<uint32_t>(origin >> 32);
    // A node outside this group made it: its leader tells it how it went (tell_outcomes).
    if (!m_places && formed && origin != 0 && static_cast<uint32_t>(origin >> 32) != self_ip() && row_change(type))
        keep_outcome(origin, ticket, result,
                     type == uint16_t(storage::RecordType::Delete) && result >= 0
                         ? std::span<const bool>(m_missing, m_missing_count)
                         : std::span<const bool>());
    if (origin == m_origin) // (a delete's caller also learns which ids were not there)
        settle(ticket, result,
               type == uint16_t(storage::RecordType::Delete) && result >= 0
                   ? std::span<const bool>(m_missing, m_missing_count)
                   : std::span<const bool>());
}

// group 0's directory commands; a placement's result is its group (or Exists: placed before).
int64_t ReplicaApplier::apply_directory(uint16_t type, std::span<const std::byte> record) {
    ktl::Result<void> done = ktl::Error::Corrupt;
    int64_t group = 0;
    if (type == raftdir::kPlace) {
        uint32_t voters[raftdir::kMaxVoters];
        if (const auto p = raftdir::decode_place(record, voters)) {
            const auto e = m_directory.place(*p);
            if (!e)
                return err(e.error());
            group = (*e)->group;
            done = {};
        }
    } else if (type == raftdir::kForget) {
        if (const auto f = raftdir::decode_forget(record))
            done = m_directory.forget(*f);
    } else if (const auto r = raftdir::decode_reassign(record)) {
        done = m_directory.reassign(*r);
    }
    if (!done)
        return err(done.error());
    ++m_directory_changes;
    return group;
}

void ReplicaApplier::placed(uint64_t ticket, int64_t result) {
    for (auto& f : m_in_flight)
        if (f.ticket == ticket && f.phase == Phase::Placing) {
            if (result >= 0 || result == err(ktl::Error::Exists))
                f.phase = Phase::Placed; // (its create is proposed in the next round)
            else
                settle(ticket, result);
            return;
        }
}

// The directory is group 0's state: nothing else a snapshot covers lives in this task.
size_t ReplicaApplier::save(std::span<uint8_t> out) {
    if (!m_places) { // (a collection's group: whether its collection's drop is applied)
        if (!m_closed || out.empty())
            return 0;
        out[0] = 1;
        return 1;
    }
    return m_directory.snapshot(std::as_writable_bytes(out));
}

bool ReplicaApplier::load(std::span<const uint8_t> state) {
    if (state.empty()) { // (a snapshot of a kernel before the directory, or of an open group)
        m_directory = raftdir::Directory {};
        ++m_directory_changes;
        m_closed = false;
        return true;
    }
    if (!m_places) {
        m_closed = state.size() == 1 && state[0] == 1;
        return m_closed;
    }
    if (!m_places || !m_directory.restore(std::as_bytes(state)))
        return false;
    ++m_directory_changes;
    return true;
}

// With raft_groups=1, whether group 0's directory (as applied at this point of its log) places the
// collection a change names in a group of its own.
bool ReplicaApplier::placed_in_own_group(std::span<const std::byte> record) const {
    if (!m_places || !m_router || record.empty())
        return false;
    const auto n = std::to_integer<size_t>(record[0]);
    return n != 0 && record.size() > n &&
           m_directory.find({ reinterpret_cast<const char*>(record.data() + 1), n }) != nullptr;
}

int64_t ReplicaApplier::open(std::string_view name, uint32_t* dim) {
    const int64_t slot = sys::store_open(m_store, name.data(), name.size(), abi::kRead | abi::kWrite);
    if (slot < 0 || !dim)
        return slot;
    abi::VectorStats st {};
    if (sys::vec_stats(static_cast<uint64_t>(slot), &st) < 0) {
        sys::cap_delete(static_cast<uint64_t>(slot));
        return err(ktl::Error::IoError);
    }
    *dim = st.dim;
    return slot;
}

// The record applied to this node's store as the storage task replays one (a command applied
// again after a restart finds it there: a create that is there and a drop that is gone are done).
// A committed change is never skipped for a passing refusal (store_retry.h).
int64_t ReplicaApplier::apply_record(uint16_t type, std::span<const std::byte> record) {
    auto d = storage::decode_record(type, record);
    if (!d || storage::is_raft_record(d->type) || d->type == storage::RecordType::Audit)
        return err(ktl::Error::Corrupt);
    // A committed drop ends the collection's placement on every voter alike, whatever the store here says.
    if (const raftdir::Entry* e = d->type == storage::RecordType::Drop && m_places ? m_directory.find(d->name)
                                                                                   : nullptr)
        if (m_directory.forget({ e->group, d->name }))
            ++m_directory_changes;
    return patiently([&] { return apply_once(*d); });
}

int64_t ReplicaApplier::apply_once(const storage::DecodedRecord& rec) {
    const storage::DecodedRecord* d = &rec;
    switch (d->type) {
    case storage::RecordType::Create: {
        if ((d->create.flags & abi::kCreateReplicated) == 0)
            return err(ktl::Error::Corrupt);
        abi::CreateParams p { d->create.dim,          d->create.metric, d->create.m,    d->create.ef_construction,
                              d->create.max_elements, d->create.max_ef, d->create.flags };
        // (Exists: one of this node's own collections has the name; done before: 1.)
        return sys::store_create(m_store, d->name.data(), d->name.size(), &p);
    }
    case storage::RecordType::Drop: {
        const int64_t r = sys::store_drop(m_store, d->name.data(), d->name.size());
        return r == err(ktl::Error::NotFound) ? 0 : r;
    }
    case storage::RecordType::Upsert: {
        uint32_t dim = 0;
        int64_t slot = open(d->name, &dim);
        if (slot >= 0 && d->upsert.dim != dim) {
            sys::cap_delete(static_cast<uint64_t>(slot));
            return err(ktl::Error::InvalidArgs);
        }
        if (slot < 0)
            return slot;
        const int64_t r = sys::vec_insert(static_cast<uint64_t>(slot), reinterpret_cast<const uint64_t*>(d->upsert.ids),
                                          reinterpret_cast<const float*>(d->upsert.vectors), d->upsert.count,
                                          d->upsert.provenance);
        sys::cap_delete(static_cast<uint64_t>(slot));
        return r;
    }
    case storage::RecordType::Delete: {
        const int64_t slot = open(d->name, nullptr);
        if (slot < 0)
            return slot;
        m_missing_count = 0;
        const int64_t r = sys::vec_delete(static_cast<uint64_t>(slot), ptr(d->delete_ids), d->delete_count, m_missing);
        if (r >= 0)
            m_missing_count = d->delete_count;
        sys::cap_delete(static_cast<uint64_t>(slot));
        return r;
    }
    default: return err(ktl::Error::Corrupt);
    }
}

} // namespace clusterd

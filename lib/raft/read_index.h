#pragma once
// Linearizable reads without a log entry (issue 35; docs/replication.md "Reads"): Raft's read
// index (Ongaro's dissertation, 6.4). A read is answered at any voter once that voter has applied
// the log up to an index the leader hands out; the leader hands one out only after it has shown
// that it still leads, by a round of probes answered by a majority of the voters in its term, and
// only once its commit index covers every entry of the terms before its own. Nothing is written:
// a read costs a round trip from the leader to a majority, not a durable append on each voter.
//
// Why the round proves enough: a round started after a read arrived and acknowledged by a majority
// of voters at term T or earlier means no leader of a later term existed when the read arrived
// (that leader's electors, a majority, would have been past T, and two majorities share a
// voter); a write acknowledged
// before the read arrived was therefore committed in a term up to T and, the leader holding every
// committed entry (leader completeness), lies at or below its commit index once that index covers
// the entries of earlier terms (the engine's no-op of the new term committed). Engines differ in
// that last point; the caller says whether it holds (`View::ready`).
//
// The leader's side is a pure state machine (LeaderReads), tested on the host; the messages that
// carry asks, probes, acknowledgements and answers between members are encoded here too, with one
// more the same channel carries: a removed voter told so.
//
// A message (little-endian, the replication desk's command header, so one channel carries both):
//   u64 0 | u64 ticket | u16 type (kAsk..kAnswer) | u16 0 | u32 16 | u64 a | u64 b
//   kAsk:    a follower's read `ticket` (a, b: 0)
//   kProbe:  the leader's round a at term b
//   kAck:    round a acknowledged at the voter's term b
//   kAnswer: the follower's `ticket`, read index a (0: refused, the leader no longer leads) | b: 0
//   kRemoved: to a server that asked for votes and was removed from the group while it was down:
//            the teller's term a (b: 0)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace raftread {

enum Type : uint16_t { kAsk = 0x101, kProbe = 0x102, kAck = 0x103, kAnswer = 0x104, kRemoved = 0x105 };
constexpr size_t kMessageBytes = 40;

struct Message {
    Type type;
    uint64_t ticket, a, b;
};
// Writes `m` into out (kMessageBytes at least): its length.
size_t encode(const Message& m, std::span<uint8_t> out);
// A read-index message, or nothing (another type of command, or one that does not add up).
std::optional<Message> decode(std::span<const uint8_t> in);
// Whether `in` is a read-index message by its type (decode() then says whether it is well formed).
bool is_read_message(std::span<const uint8_t> in);

// What the leader's member says at each turn.
struct View {
    uint64_t self = 0;
    uint64_t term = 0;
    uint64_t commit = 0;
    bool leader = false;
    bool ready = false; // the commit index covers every entry of earlier terms
    std::span<const uint64_t> voters;
};

class LeaderReads {
public:
    // Reads waiting at the leader: its own voters' desks (16 each) for a group of five.
    static constexpr size_t kMaxReads = 80;
    static constexpr size_t kMaxVoters = 8;
    // A round not acknowledged by a majority by then is started again (probes are datagrams).
    static constexpr uint64_t kRoundTimeoutNs = 250'000'000;

    // A read asked by `reader` (a raft id: this member's for its own callers). False when full; a
    // read asked again while it waits stays one read.
    bool ask(uint64_t reader, uint64_t ticket);
    // An acknowledgement of round `round` by voter `from`, which was at `term` when it answered
    // (counted unless past this leader's term).
    void ack(uint64_t from, uint64_t round, uint64_t term);

    struct Answer {
        uint64_t reader, ticket;
        uint64_t index; // 0: refused (leadership lost before the read was confirmed)
    };
    struct Probe {
        uint64_t round = 0, term = 0; // round 0: no round starts this turn
    };
    // One turn: answers the reads a confirmed round covers (index: the commit index now) or that
    // can no longer be confirmed (index 0), at most out.size() (the rest at the next turn); and,
    // when reads wait for a round that has not started, starts one (*probe: send it to every
    // other voter). The number of answers written.
    size_t turn(const View& v, uint64_t now_ns, std::span<Answer> out, Probe& probe);

    size_t waiting() const { return m_count; }
    struct Counters {
        uint64_t rounds, confirmed, answered, refused;
    };
    Counters counters() const { return m_counters; }

private:
    struct Read {
        uint64_t reader, ticket;
        uint64_t round; // the first round that started after it was asked
    };
    bool round_confirmed(const View& v) const;

    Read m_reads[kMaxReads] {};
    size_t m_count = 0;
    uint64_t m_round = 0;     // the newest round started (0: none yet)
    uint64_t m_confirmed = 0; // the newest round a majority acknowledged, in m_term
    uint64_t m_term = 0;      // the term of m_round (and of m_confirmed)
    uint64_t m_started_ns = 0;
    bool m_active = false; // m_round waits for acknowledgements
    uint64_t m_acks[kMaxVoters] {};
    size_t m_ack_count = 0;
    Counters m_counters {};
};

} // namespace raftread

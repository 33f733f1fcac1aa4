#include "read_index.h"

namespace raftread {
namespace {

void put(uint8_t* p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get(const uint8_t* p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i)
        v |= uint64_t(p[i]) << (8 * i);
    return v;
}

constexpr size_t kHeader = 24;
constexpr uint32_t kBody = 16;

bool contains(std::span<const uint64_t> ids, uint64_t id) {
    for (uint64_t x : ids)
        if (x == id)
            return true;
    return false;
}

} // namespace

size_t encode(const Message& m, std::span<uint8_t> out) {
    if (out.size() < kMessageBytes)
        return 0;
    uint8_t* p = out.data();
    put(p, 0, 8);
    put(p + 8, m.ticket, 8);
    put(p + 16, m.type, 2);
    put(p + 18, 0, 2);
    put(p + 20, kBody, 4);
    put(p + 24, m.a, 8);
    put(p + 32, m.b, 8);
    return kMessageBytes;
}

bool is_read_message(std::span<const uint8_t> in) {
    if (in.size() < kHeader)
        return false;
    const uint64_t type = get(in.data() + 16, 2);
    return type >= kAsk && type <= kRemoved;
}

std::optional<Message> decode(std::span<const uint8_t> in) {
    if (in.size() != kMessageBytes || !is_read_message(in) || get(in.data(), 8) != 0 || get(in.data() + 18, 2) != 0 ||
        get(in.data() + 20, 4) != kBody)
        return std::nullopt;
    return Message { static_cast<Type>(get(in.data() + 16, 2)), get(in.data() + 8, 8), get(in.data() + 24, 8),
                     get(in.data() + 32, 8) };
}

bool LeaderReads::ask(uint64_t reader, uint64_t ticket) {
    // Asked again (the reader heard nothing: its question or the answer was lost): it waits as it
    // was, its round the one after the first question arrived.
    for (size_t i = 0; i < m_count; ++i)
        if (m_reads[i].reader == reader && m_reads[i].ticket == ticket)
            return true;
    if (m_count == kMaxReads)
        return false;
    // Only a round that starts after this one arrived shows that no later leader existed then.
    m_reads[m_count++] = Read { reader, ticket, m_round + 1 };
    return true;
}

void LeaderReads::ack(uint64_t from, uint64_t round, uint64_t term) {
    // A voter still in an earlier term counts too: it had not joined a later leader's majority
    // either (a voter that has not yet heard of this leader's term must not hold its reads back).
    if (!m_active || round != m_round || term > m_term)
        return;
    for (size_t i = 0; i < m_ack_count; ++i)
        if (m_acks[i] == from)
            return;
    if (m_ack_count < kMaxVoters)
        m_acks[m_ack_count++] = from;
}

bool LeaderReads::round_confirmed(const View& v) const {
    if (v.voters.empty())
        return false;
    size_t yes = contains(v.voters, v.self) ? 1 : 0;
    for (size_t i = 0; i < m_ack_count; ++i)
        if (m_acks[i] != v.self && contains(v.voters, m_acks[i]))
            ++yes;
    return yes >= v.voters.size() / 2 + 1;
}

size_t LeaderReads::turn(const View& v, uint64_t now_ns, std::span<Answer> out, Probe& probe) {
    probe = Probe {};
    size_t n = 0;
    if (!v.leader) {
        // Another leader answers them, or nobody: the readers learn it now, not at their timeout.
        size_t kept = 0;
        for (size_t i = 0; i < m_count; ++i) {
            if (n < out.size()) {
                out[n++] = Answer { m_reads[i].reader, m_reads[i].ticket, 0 };
                ++m_counters.refused;
            } else {
                m_reads[kept++] = m_reads[i];
            }
        }
        m_count = kept;
        m_active = false;
        m_confirmed = 0;
        m_term = 0;
        return n;
    }
    if (v.term != m_term) { // a round of another term proves nothing about this one
        m_term = v.term;
        m_active = false;
        m_confirmed = 0;
    }
    if (m_active && now_ns - m_started_ns > kRoundTimeoutNs)
        m_active = false; // (its probes or acknowledgements were lost: a new round)
    for (int pass = 0; pass < 2; ++pass) {
        if (m_active && round_confirmed(v)) {
            m_confirmed = m_round;
            m_active = false;
            ++m_counters.confirmed;
        }
        bool unconfirmed = false;
        size_t kept = 0;
        for (size_t i = 0; i < m_count; ++i) {
            const Read& r = m_reads[i];
            if (v.ready && r.round <= m_confirmed && n < out.size()) {
                out[n++] = Answer { r.reader, r.ticket, v.commit };
                ++m_counters.answered;
                continue;
            }
            unconfirmed = unconfirmed || r.round > m_confirmed;
            m_reads[kept++] = r;
        }
        m_count = kept;
        if (m_active || !unconfirmed)
            break;
        m_round += 1;
        m_active = true;
        m_started_ns = now_ns;
        m_ack_count = 0;
        probe = Probe { m_round, m_term };
        ++m_counters.rounds;
        // (A group of one confirms its round at once: the second pass answers.)
    }
    return n;
}

} // namespace raftread

#include "federation.h"

#include "consensus.h"
#include "fed_desk.h"
#include "peer_channel.h"
#include <abi/sys.h>
#include <abi/vector.h>

#include <cstring>

#include <ktl/le_bytes.h>
#include <new>
#include <raft/directory.h>
#include <string_view>

namespace clusterd {
namespace {

enum Type : uint8_t { kAsk = 1, kAnswer = 2, kReadAnswer = 3 };
enum Status : uint8_t { kHits = 0, kNone = 1, kUnfit = 2, kUnconfirmed = 3 };
constexpr uint8_t kNoMetric = 0xff; // an answer without a collection

constexpr size_t kAskHeader = 4 + 4 * 4 + 1;
constexpr size_t kAnswerHeader = 4 + 4 + 4;
constexpr size_t kReadHeader = 4 + 4 * 4; // then the ids not found, the payload's length, the payload
constexpr size_t kHit = 12, kHitWithProvenance = 20;
constexpr size_t kVectorHead = sizeof(cluster_abi::FedVectorHead);
constexpr uint32_t kDefaultDeadlineMs = 2000;
// A read from outside waits this long at most for its read index here (past the asker's 4 s).
constexpr uint64_t kPendingNs = 4'500'000'000ull;
// A read from outside asks the next voter when the one asked has been silent this long.
constexpr uint64_t kPerVoterNs = 1'000'000'000ull;
static_assert(kAskHeader + 64 + fed::kMaxDim * sizeof(float) <= Federation::kMaxMessage);
static_assert(kAnswerHeader + cluster_abi::kFedMaxK * kHitWithProvenance + 1 + 31 <= Federation::kMaxMessage);
static_assert(kAskHeader + 64 + cluster_abi::kFedMaxInput <= Federation::kMaxMessage);
static_assert(cluster_abi::kFedMaxInput <= sizeof(float) * fed::kMaxDim); // (g_query holds it)
static_assert(kReadHeader + cluster_abi::kFedMaxGetIds * 8 + 4 + cluster_abi::kFedMaxPayload + 1 + 31 <=
              Federation::kMaxMessage);
static_assert(sizeof(abi::VectorStats) <= cluster_abi::kFedMaxPayload);
static_assert(kVectorHead + fed::kMaxDim * sizeof(float) <= cluster_abi::kFedMaxPayload); // one always fits

alignas(raftwire::Reassembler) unsigned char g_reassemblers[Federation::kSenders][sizeof(raftwire::Reassembler)];
uint8_t g_storage[Federation::kSenders][Federation::kMaxMessage];
alignas(8) uint8_t g_out[Federation::kMaxMessage];     // the message being sent (one task)
alignas(8) uint8_t g_request[Federation::kMaxMessage]; // a read from outside's request, for each voter in turn
alignas(8) float g_query[fed::kMaxDim];                // a query being asked or served
alignas(8) float g_vector[fed::kMaxDim];               // a vector a get reads
alignas(8) uint8_t g_pending[Federation::kPending][Federation::kMaxMessage]; // reads waiting for their index
abi::Hit g_hits[cluster_abi::kFedMaxK];
uint64_t g_provenance[cluster_abi::kFedMaxK];  // the hits' (a search from outside that asks)
uint64_t g_filter[cluster_abi::kFedMaxFilter]; // a search from outside's filter, aligned

using ktl::get_le;
using ktl::put_le;
void copy_name(char (&dst)[32], const char* src, size_t len) {
    len = len < sizeof dst - 1 ? len : sizeof dst - 1;
    std::memcpy(dst, src, len);
    dst[len] = '\0';
}

} // namespace

void Federation::start(uint32_t store, uint32_t endpoint, uint32_t self_ip, const char* self_name, raftwire::Key key,
                       uint64_t epoch) {
    m_store = store;
    m_endpoint = endpoint;
    m_self_ip = self_ip;
    copy_name(m_self, self_name, std::strlen(self_name));
    m_key = key;
    m_epoch = epoch;
}

Federation::Sender* Federation::sender(uint32_t ip) {
    for (size_t i = 0; i < m_sender_count; ++i)
        if (m_senders[i].ip == ip) {
            m_senders[i].used = ++m_uses;
            return &m_senders[i];
        }
    Sender* s = nullptr;
    if (m_sender_count < kSenders) {
        s = &m_senders[m_sender_count];
        s->in = new (g_reassemblers[m_sender_count]) raftwire::Reassembler({ g_storage[m_sender_count], kMaxMessage });
        ++m_sender_count;
    } else { // the one heard from longest ago starts over for this sender
        s = &m_senders[0];
        for (auto& o : m_senders)
            if (o.used < s->used)
                s = &o;
        const size_t i = static_cast<size_t>(s - m_senders);
        s->in->~Reassembler();
        s->in = new (g_reassemblers[i]) raftwire::Reassembler({ g_storage[i], kMaxMessage });
    }
    s->ip = ip;
    s->used = ++m_uses;
    return s;
}

bool Federation::send(uint32_t ip, uint16_t port, std::span<const uint8_t> message) {
    raftwire::FrameHeader h;
    h.group = kGroup;
    h.from = m_self_ip;
    h.to = ip;
    h.epoch = m_epoch;
    h.seq = ++m_seq; // one count for every receiver: each sees its own messages in order
    return send_sealed(m_endpoint, ip, port, h, message, m_key, true);
}

uint64_t Federation::deadline_ns() const {
    if (m_id == 0)
        return 0;
    if (m_mode != cluster_abi::kFedEveryNode && m_asked < m_target_count && m_asked_ns + kPerVoterNs < m_deadline_ns)
        return m_asked_ns + kPerVoterNs;
    return m_deadline_ns;
}

void Federation::ask_next(uint64_t now_ns) {
    if (m_asked == m_target_count)
        return;
    const bool waiting = m_asked != 0 && !m_heard[m_asked - 1];
    if (waiting && now_ns - m_asked_ns < kPerVoterNs)
        return;
    const Target& t = m_targets[m_asked++];
    m_asked_ns = now_ns;
    (void)send(t.ip, t.port, { g_request, m_request_len });
}

void Federation::receive(uint32_t ip, uint16_t port, std::span<const uint8_t> datagram, uint64_t now_ns) {
    (void)now_ns;
    raftwire::FrameHeader h;
    std::span<const uint8_t> slice;
    if (raftwire::open(datagram, m_key, h, slice) != raftwire::Verdict::Accepted || h.group != kGroup ||
        h.to != m_self_ip || h.from != ip) {
        ++m_counters.refused;
        return;
    }
    Sender* s = sender(ip);
    if (s->in->feed(h, slice) != raftwire::Reassembler::Result::Complete)
        return;
    const std::span<const uint8_t> message = s->in->message();
    if (message.size() >= 4 && message[0] == kAsk && message[3] <= cluster_abi::kFedWithProvenance)
        serve(ip, port, message);
    else if (message.size() >= 4 && message[0] == kAnswer)
        answered(ip, message);
    else if (message.size() >= 4 && message[0] == kReadAnswer)
        answered_read(ip, message);
}

uint8_t Federation::search_here(const char* name, size_t name_len, uint32_t k, uint32_t ef, uint32_t dim,
                                const float* query, uint32_t& count, bool& replicated, uint8_t& metric,
                                std::span<const uint64_t> filter, bool provenance) {
    count = 0;
    replicated = false;
    metric = kNoMetric;
    const int64_t slot = sys::store_open(m_store, name, name_len, abi::kRead);
    if (slot < 0)
        return kNone;
    abi::VectorStats st {};
    uint8_t status = kUnfit;
    const bool stats = sys::vec_stats(static_cast<uint64_t>(slot), &st) >= 0;
    if (stats && st.dim == dim) {
        status = kUnconfirmed; // (the search itself failed here: busy, no memory; another may serve it)
        replicated = st.replicated != 0;
        metric = static_cast<uint8_t>(st.metric);
        const abi::SearchFilter f { reinterpret_cast<uint64_t>(filter.data()), filter.size() };
        const int64_t n = sys::vec_search(static_cast<uint64_t>(slot), query, k, ef < k ? k : ef, g_hits,
                                          filter.empty() ? nullptr : &f);
        if (n >= 0) {
            count = static_cast<uint32_t>(n);
            status = kHits;
        }
        for (uint32_t i = 0; provenance && i < count; ++i) {
            g_provenance[i] = 0; // (a hit deleted since: none)
            (void)sys::vec_get(static_cast<uint64_t>(slot), g_hits[i].id, g_vector, &g_provenance[i]);
        }
    }
    sys::cap_delete(static_cast<uint64_t>(slot));
    return status;
}

namespace {

// A request that adds up: its mode, op, sizes and name (its payload's length exactly as they say).
bool well_formed(std::span<const uint8_t> m) {
    if (m.size() < kAskHeader)
        return false;
    const uint8_t mode = m[1], op = m[2], flags = m[3];
    const uint32_t k = static_cast<uint32_t>(get_le(m.data() + 8, 4)),
                   dim = static_cast<uint32_t>(get_le(m.data() + 16, 4));
    const uint8_t name_len = m[20];
    if (mode > cluster_abi::kFedVoterLocal || op > cluster_abi::kFedStats ||
        (mode == cluster_abi::kFedEveryNode && (op != cluster_abi::kFedSearch || flags != 0)) ||
        (op != cluster_abi::kFedSearch && flags != 0) || name_len == 0 || name_len > abi::kMaxNameLength ||
        m.size() < kAskHeader + name_len ||
        !abi::valid_collection_name({ reinterpret_cast<const char*>(m.data() + kAskHeader), name_len }))
        return false;
    const size_t payload = m.size() - kAskHeader - name_len;
    switch (op) {
    case cluster_abi::kFedSearch: { // (the filter's ids after the floats: from outside only)
        const size_t floats = size_t(dim) * sizeof(float), extra = payload - (payload < floats ? payload : floats);
        return k != 0 && k <= cluster_abi::kFedMaxK && dim != 0 && dim <= fed::kMaxDim && payload >= floats &&
               extra % sizeof(uint64_t) == 0 && extra / sizeof(uint64_t) <= cluster_abi::kFedMaxFilter &&
               (extra == 0 || mode != cluster_abi::kFedEveryNode);
    }
    case cluster_abi::kFedGet:
        return k != 0 && k <= cluster_abi::kFedMaxGetIds && dim == 0 && payload == size_t(k) * sizeof(uint64_t);
    default: return k == 0 && dim == 0 && payload == 0;
    }
}

std::string_view request_name(std::span<const uint8_t> m) {
    return { reinterpret_cast<const char*>(m.data() + kAskHeader), m[20] };
}

} // namespace

// Another node's request: this node's own top k (or, read from outside, a voter's copy) answered
// to it; a linearizable read from outside once its read index is applied here.
void Federation::serve(uint32_t ip, uint16_t port, std::span<const uint8_t> m) {
    if (!well_formed(m))
        return;
    if (m[1] != cluster_abi::kFedVoterLinearizable) {
        execute(ip, port, m);
        return;
    }
    Pending* free = nullptr;
    for (auto& p : m_pending)
        if (p.length == 0 && !free)
            free = &p;
    const int64_t read = free ? consensus::peer_read_begin(request_name(m)) : -int64_t(ktl::Error::WouldBlock);
    if (read <= 0) {
        refuse(ip, port, m, read == -int64_t(ktl::Error::NotFound) ? kNone : kUnconfirmed);
        return;
    }
    const size_t i = static_cast<size_t>(free - m_pending);
    std::memcpy(g_pending[i], m.data(), m.size());
    *free = Pending { ip, port, static_cast<uint16_t>(m.size()), static_cast<uint64_t>(read), sys::clock_ns() };
}

void Federation::serve_pending(uint64_t now_ns) {
    for (size_t i = 0; i < kPending; ++i) {
        Pending& p = m_pending[i];
        if (p.length == 0)
            continue;
        const int64_t state = consensus::peer_read_state(p.read);
        if (state == 0 && now_ns - p.since_ns < kPendingNs)
            continue;
        if (state == 0)
            consensus::peer_read_cancel(p.read); // (its asker has given up: the read's place is free)
        const std::span<const uint8_t> m(g_pending[i], p.length);
        if (state == 1)
            execute(p.ip, p.port, m);
        else
            refuse(p.ip, p.port, m, kUnconfirmed);
        p = Pending {};
    }
}

void Federation::refuse(uint32_t ip, uint16_t port, std::span<const uint8_t> m, uint8_t status) {
    size_t at = 0;
    if (m[2] == cluster_abi::kFedSearch) {
        g_out[0] = kAnswer;
        g_out[1] = status;
        g_out[2] = 0;
        g_out[3] = kNoMetric;
        put_le(g_out + 4, get_le(m.data() + 4, 4), 4);
        put_le(g_out + 8, 0, 4);
        at = kAnswerHeader;
    } else {
        std::memset(g_out, 0, kReadHeader + 4);
        g_out[0] = kReadAnswer;
        g_out[1] = status;
        put_le(g_out + 4, get_le(m.data() + 4, 4), 4);
        at = kReadHeader + 4; // (no ids, no payload)
    }
    send_answer(ip, port, at);
}

// The answer in g_out (its first `at` bytes), signed with this node's name, sent to the asker.
void Federation::send_answer(uint32_t ip, uint16_t port, size_t at) {
    const size_t self_len = std::strlen(m_self);
    g_out[at] = static_cast<uint8_t>(self_len);
    std::memcpy(g_out + at + 1, m_self, self_len);
    ++m_counters.served;
    (void)send(ip, port, { g_out, at + 1 + self_len });
}

void Federation::execute(uint32_t ip, uint16_t port, std::span<const uint8_t> m) {
    const uint32_t id = static_cast<uint32_t>(get_le(m.data() + 4, 4));
    size_t at = 0;
    if (m[2] == cluster_abi::kFedGet) {
        at = get_here(m, id);
    } else if (m[2] == cluster_abi::kFedStats) {
        at = stats_here(m, id);
    } else {
        const uint32_t k = static_cast<uint32_t>(get_le(m.data() + 8, 4)),
                       ef = static_cast<uint32_t>(get_le(m.data() + 12, 4)),
                       dim = static_cast<uint32_t>(get_le(m.data() + 16, 4));
        const std::string_view name = request_name(m);
        char name_copy[abi::kMaxNameLength + 1];
        std::memcpy(name_copy, name.data(), name.size());
        const uint8_t* payload = m.data() + kAskHeader + name.size();
        std::memcpy(g_query, payload, dim * sizeof(float));
        const size_t filter_count = (m.size() - kAskHeader - name.size() - dim * sizeof(float)) / sizeof(uint64_t);
        for (size_t i = 0; i < filter_count; ++i)
            g_filter[i] = get_le(payload + dim * sizeof(float) + i * sizeof(uint64_t), 8);
        const bool provenance = (m[3] & cluster_abi::kFedWithProvenance) != 0;
        uint32_t count = 0;
        bool replicated = false;
        uint8_t metric = kNoMetric;
        uint8_t status = search_here(name_copy, name.size(), k, ef, dim, g_query, count, replicated, metric,
                                     { g_filter, filter_count }, provenance);
        if (m[1] != cluster_abi::kFedEveryNode && status == kHits && !replicated)
            status = kNone; // (a collection of this node's own under that name is not the one asked for)
        g_out[0] = kAnswer;
        g_out[1] = status;
        g_out[2] = replicated ? 1 : 0;
        g_out[3] = metric;
        put_le(g_out + 4, id, 4);
        put_le(g_out + 8, status == kHits ? count : 0, 4);
        at = kAnswerHeader;
        for (uint32_t i = 0; status == kHits && i < count; ++i, at += provenance ? kHitWithProvenance : kHit) {
            put_le(g_out + at, g_hits[i].id, 8);
            uint32_t bits;
            std::memcpy(&bits, &g_hits[i].distance, 4);
            put_le(g_out + at + 8, bits, 4);
            if (provenance)
                put_le(g_out + at + 12, g_provenance[i], 8);
        }
    }
    send_answer(ip, port, at);
}

namespace {

// A replicated collection's capability here for a read from outside (-1: none such here).
int64_t open_replica(uint32_t store, std::string_view name, abi::VectorStats& st) {
    const int64_t slot = sys::store_open(store, name.data(), name.size(), abi::kRead);
    if (slot < 0)
        return -1;
    if (sys::vec_stats(static_cast<uint64_t>(slot), &st) < 0 || st.replicated != abi::kStatsReplicated) {
        sys::cap_delete(static_cast<uint64_t>(slot));
        return -1;
    }
    return slot;
}

} // namespace

// The vectors of the ids asked, in order, as many as the payload holds (at least one found).
size_t Federation::get_here(std::span<const uint8_t> m, uint32_t id) {
    const std::string_view name = request_name(m);
    const uint32_t k = static_cast<uint32_t>(get_le(m.data() + 8, 4));
    const uint8_t* ids = m.data() + kAskHeader + name.size();
    abi::VectorStats st {};
    const int64_t slot = open_replica(m_store, name, st);
    const bool unfit = slot >= 0 && st.kind != 0;
    uint32_t count = 0, absent = 0;
    uint64_t absent_ids[cluster_abi::kFedMaxGetIds];
    bool complete = slot >= 0 && !unfit;
    // The payload follows the ids not found, which are known only at the end: built past their room.
    const size_t payload_at = kReadHeader + cluster_abi::kFedMaxGetIds * 8 + 4;
    size_t payload = 0;
    for (uint32_t i = 0; complete && i < k; ++i) {
        const uint64_t want = get_le(ids + size_t(i) * 8, 8);
        const size_t entry = kVectorHead + size_t(st.dim) * sizeof(float);
        if (payload + entry > cluster_abi::kFedMaxPayload) {
            complete = false; // (the asker asks again for the rest)
            break;
        }
        uint64_t node = 0;
        const int64_t r = sys::vec_get(static_cast<uint64_t>(slot), want, g_vector, &node);
        if (r == -static_cast<int64_t>(ktl::Error::NotFound)) {
            absent_ids[absent++] = want;
            continue;
        }
        if (r < 0) {
            complete = false;
            break;
        }
        uint8_t* e = g_out + payload_at + payload;
        put_le(e, want, 8);
        put_le(e + 8, node, 8);
        std::memcpy(e + kVectorHead, g_vector, st.dim * sizeof(float));
        payload += entry;
        ++count;
    }
    if (slot >= 0)
        sys::cap_delete(static_cast<uint64_t>(slot));
    const size_t ids_at = kReadHeader, length_at = ids_at + size_t(absent) * 8;
    if (length_at + 4 != payload_at) // the payload moved down behind the ids not found
        std::memmove(g_out + length_at + 4, g_out + payload_at, payload);
    g_out[0] = kReadAnswer;
    g_out[1] = slot < 0 ? kNone : unfit ? kUnfit : kHits;
    g_out[2] = complete ? 1 : 0;
    g_out[3] = 0;
    put_le(g_out + 4, id, 4);
    put_le(g_out + 8, count, 4);
    put_le(g_out + 12, st.dim, 4);
    put_le(g_out + 16, absent, 4);
    for (uint32_t i = 0; i < absent; ++i)
        put_le(g_out + ids_at + size_t(i) * 8, absent_ids[i], 8);
    put_le(g_out + length_at, payload, 4);
    return length_at + 4 + payload;
}

size_t Federation::stats_here(std::span<const uint8_t> m, uint32_t id) {
    abi::VectorStats st {};
    const int64_t slot = open_replica(m_store, request_name(m), st);
    if (slot >= 0)
        sys::cap_delete(static_cast<uint64_t>(slot));
    std::memset(g_out, 0, kReadHeader);
    g_out[0] = kReadAnswer;
    g_out[1] = slot < 0 ? kNone : kHits;
    g_out[2] = 1;
    put_le(g_out + 4, id, 4);
    put_le(g_out + 12, st.dim, 4);
    const size_t bytes = slot < 0 ? 0 : sizeof st;
    put_le(g_out + kReadHeader, bytes, 4);
    std::memcpy(g_out + kReadHeader + 4, &st, bytes);
    return kReadHeader + 4 + bytes;
}

// Two hits are one vector only when they are one id of one node's collection, or one id of two
// replicas of a replicated collection; nodes' own collections of one name are separate id spaces.
void Federation::merge(uint64_t id, float distance, uint32_t node, uint64_t provenance) {
    cluster_abi::FedHit* hits = m_result.hits;
    uint32_t& n = m_result.count;
    uint32_t at = n;
    for (uint32_t i = 0; i < n; ++i)
        if (hits[i].id == id &&
            (hits[i].node == node || (m_replicated[hits[i].node] && m_replicated[node]))) { // the nearer stays
            if (distance >= hits[i].distance)
                return;
            at = i;
            break;
        }
    if (at == n) {
        if (n == m_k) {
            if (distance >= hits[n - 1].distance)
                return;
            at = n - 1; // the farthest goes
        } else {
            ++n;
        }
    }
    hits[at] = cluster_abi::FedHit { id, distance, node, provenance };
    for (; at > 0 && hits[at - 1].distance > hits[at].distance; --at) { // kept in ascending order
        const cluster_abi::FedHit t = hits[at];
        hits[at] = hits[at - 1];
        hits[at - 1] = t;
    }
}

// A read from outside that a voter served: the whole answer (the first that served it ends it).
void Federation::answered_read(uint32_t ip, std::span<const uint8_t> m) {
    if (m_id == 0 || m_mode == cluster_abi::kFedEveryNode || m_op == cluster_abi::kFedSearch ||
        m.size() < kReadHeader + 4 || get_le(m.data() + 4, 4) != m_id)
        return;
    uint32_t t = 0;
    while (t < m_target_count && !(m_targets[t].ip == ip && !m_heard[t]))
        ++t;
    if (t == m_target_count)
        return;
    const uint8_t status = m[1];
    const uint32_t count = static_cast<uint32_t>(get_le(m.data() + 8, 4)),
                   dim = static_cast<uint32_t>(get_le(m.data() + 12, 4)),
                   absent = static_cast<uint32_t>(get_le(m.data() + 16, 4));
    if (count > cluster_abi::kFedMaxGetIds || absent > cluster_abi::kFedMaxGetIds || dim > fed::kMaxDim)
        return;
    const size_t length_at = kReadHeader + size_t(absent) * 8;
    if (m.size() < length_at + 4)
        return;
    const uint32_t payload = static_cast<uint32_t>(get_le(m.data() + length_at, 4));
    const size_t name_at = length_at + 4 + payload;
    if (payload > cluster_abi::kFedMaxPayload || m.size() < name_at + 1)
        return;
    const uint8_t name_len = m[name_at];
    if (name_len == 0 || name_len > 31 || m.size() != name_at + 1 + name_len)
        return;
    const bool fits = m_op == cluster_abi::kFedGet ? payload == count * (kVectorHead + size_t(dim) * sizeof(float))
                                                   : payload == sizeof(abi::VectorStats) && count == 0;
    m_heard[t] = 1;
    copy_name(m_targets[t].name, reinterpret_cast<const char*>(m.data() + name_at + 1), name_len);
    if (status != kHits || !fits) {
        m_result.refusal = status != kHits ? status : uint8_t(kUnconfirmed);
        ++m_result.without;
        return;
    }
    m_result.answered = 1;
    copy_name(m_result.nodes[0], m_targets[t].name, std::strlen(m_targets[t].name));
    m_result.confirmed = m_mode == cluster_abi::kFedVoterLinearizable ? 1 : 0;
    m_result.count = count;
    m_result.payload_dim = dim;
    m_result.complete = m[2] ? 1 : 0;
    m_result.not_found = absent;
    for (uint32_t i = 0; i < absent; ++i)
        m_result.absent[i] = get_le(m.data() + kReadHeader + size_t(i) * 8, 8);
    m_result.payload_bytes = payload;
    std::memcpy(m_result.payload, m.data() + length_at + 4, payload);
    finish();
}

void Federation::answered(uint32_t ip, std::span<const uint8_t> m) {
    if (m_id == 0 || m_op != cluster_abi::kFedSearch || m.size() < kAnswerHeader || get_le(m.data() + 4, 4) != m_id)
        return;
    uint32_t t = 0;
    while (t < m_target_count && !(m_targets[t].ip == ip && !m_heard[t]))
        ++t;
    if (t == m_target_count)
        return; // not asked, or heard already
    const uint8_t status = m[1], replicated = m[2], metric = m[3];
    const uint32_t count = static_cast<uint32_t>(get_le(m.data() + 8, 4));
    const size_t hit = (m_flags & cluster_abi::kFedWithProvenance) != 0 ? kHitWithProvenance : kHit;
    if (count > m_k || m.size() < kAnswerHeader + size_t(count) * hit + 1)
        return;
    const size_t name_at = kAnswerHeader + size_t(count) * hit;
    const uint8_t name_len = m[name_at];
    if (name_len == 0 || name_len > 31 || m.size() != name_at + 1 + name_len)
        return;
    m_heard[t] = 1;
    copy_name(m_targets[t].name, reinterpret_cast<const char*>(m.data() + name_at + 1), name_len);
    if (m_mode != cluster_abi::kFedEveryNode) { // a read from outside: the first voter that serves it
        if (status != kHits || replicated == 0) {
            m_result.refusal = status != kHits ? status : uint8_t(kNone);
            ++m_result.without;
            if (status == kUnfit) // (every voter's copy has the one dimension)
                finish();
            return;
        }
        m_result.answered = 1;
        m_replicated[0] = true;
        m_result.confirmed = m_mode == cluster_abi::kFedVoterLinearizable ? 1 : 0;
        copy_name(m_result.nodes[0], m_targets[t].name, std::strlen(m_targets[t].name));
        for (uint32_t i = 0; i < count; ++i) {
            const uint8_t* h = m.data() + kAnswerHeader + size_t(i) * hit;
            const uint32_t bits = static_cast<uint32_t>(get_le(h + 8, 4));
            float distance;
            std::memcpy(&distance, &bits, 4);
            if (distance == distance)
                merge(get_le(h, 8), distance, 0, hit == kHitWithProvenance ? get_le(h + 12, 8) : 0);
        }
        finish();
        return;
    }
    // Distances of another metric do not compare: that collection does not fit the query.
    if (status != kHits || (m_metric != kNoMetric && metric != m_metric)) {
        ++m_result.without;
        return;
    }
    m_metric = metric;
    const uint32_t node = m_result.answered++;
    m_replicated[node] = replicated != 0;
    copy_name(m_result.nodes[node], m_targets[t].name, std::strlen(m_targets[t].name));
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* h = m.data() + kAnswerHeader + size_t(i) * kHit;
        const uint32_t bits = static_cast<uint32_t>(get_le(h + 8, 4));
        float distance;
        std::memcpy(&distance, &bits, 4);
        if (distance == distance) // (NaN from a broken peer: dropped)
            merge(get_le(h, 8), distance, node);
    }
}

void Federation::finish() {
    for (uint32_t t = 0; t < m_target_count; ++t)
        if (!m_heard[t] && m_result.missing < cluster_abi::kFedMaxNodes)
            copy_name(m_result.missing_nodes[m_result.missing++], m_targets[t].name, std::strlen(m_targets[t].name));
    m_result.partial = m_mode == cluster_abi::kFedEveryNode && (m_result.missing || m_truncated) ? 1 : 0;
    m_counters.partial += m_result.partial;
    fed::complete(m_id, m_result);
    m_id = 0;
}

size_t Federation::put_request(const cluster_abi::FedQuery& q, uint32_t id) {
    const size_t name_len = strnlen(q.name, abi::kMaxNameLength);
    size_t n = kAskHeader;
    g_out[0] = kAsk;
    g_out[1] = q.mode;
    g_out[2] = q.op;
    g_out[3] = q.flags;
    put_le(g_out + 4, id, 4);
    put_le(g_out + 8, q.k, 4);
    put_le(g_out + 12, q.ef, 4);
    put_le(g_out + 16, q.dim, 4);
    g_out[20] = static_cast<uint8_t>(name_len);
    std::memcpy(g_out + n, q.name, name_len);
    n += name_len;
    bool valid = false;
    const size_t input = fed::input_bytes(q, valid); // (fed::take checked it)
    std::memcpy(g_out + n, g_query, input);
    return n + input;
}

void Federation::ask_voters(const cluster_abi::FedQuery& q, std::span<const Target> members) {
    const std::string_view name(q.name, strnlen(q.name, abi::kMaxNameLength));
    uint32_t voters[raftdir::kMaxVoters];
    const size_t n = consensus::voters_of(name, voters, raftdir::kMaxVoters);
    m_target_count = 0;
    m_truncated = false;
    // In the placement's order: its first voter created the collection and leads its group while
    // up, so it confirms a read without asking another.
    for (size_t i = 0; i < n && i < raftdir::kMaxVoters; ++i)
        for (const Target& t : members)
            if (voters[i] == t.ip) {
                m_heard[m_target_count] = 0;
                m_targets[m_target_count++] = t;
            }
    m_request_len = put_request(q, m_id);
    std::memcpy(g_request, g_out, m_request_len);
    m_asked = 0;
    if (m_target_count == 0)
        finish();
    else
        ask_next(sys::clock_ns());
}

void Federation::pump(uint64_t now_ns, std::span<const Target> members) {
    serve_pending(now_ns);
    if (m_id != 0) {
        uint32_t heard = 0;
        for (uint32_t t = 0; t < m_target_count; ++t)
            heard += m_heard[t];
        if (heard == m_target_count || now_ns >= m_deadline_ns)
            finish();
        else if (m_mode != cluster_abi::kFedEveryNode)
            ask_next(now_ns);
        return;
    }
    cluster_abi::FedQuery q {};
    const uint32_t id = fed::take(q, g_query);
    if (id == 0)
        return;
    ++m_counters.searches;
    m_id = id;
    m_k = q.k;
    m_mode = q.mode;
    m_op = q.op;
    m_flags = q.flags;
    m_result = cluster_abi::FedResult {};
    const uint64_t deadline_ms = q.deadline_ms ? q.deadline_ms : kDefaultDeadlineMs;
    m_deadline_ns = now_ns + deadline_ms * 1'000'000ull;
    if (q.mode != cluster_abi::kFedEveryNode) {
        ask_voters(q, members);
        return;
    }
    const size_t name_len = strnlen(q.name, abi::kMaxNameLength + 1);
    // This node's own copy first; a replicated one stands for every voter's.
    uint32_t count = 0;
    bool replicated = false;
    m_metric = kNoMetric;
    const uint8_t status = abi::valid_collection_name({ q.name, name_len })
                               ? search_here(q.name, name_len, q.k, q.ef, q.dim, g_query, count, replicated, m_metric)
                               : static_cast<uint8_t>(kNone);
    if (status == kHits) {
        const uint32_t node = m_result.answered++;
        m_replicated[node] = replicated;
        copy_name(m_result.nodes[node], m_self, std::strlen(m_self));
        for (uint32_t i = 0; i < count; ++i)
            merge(g_hits[i].id, g_hits[i].distance, node);
    } else {
        ++m_result.without;
    }
    m_target_count = 0;
    m_truncated = false;
    for (const Target& t : members) {
        if (m_target_count == cluster_abi::kFedMaxNodes - 1) {
            m_truncated = true; // (more members than one search asks: the result says partial)
            break;
        }
        if (replicated && consensus::is_voter(t.ip))
            continue;
        m_heard[m_target_count] = 0;
        m_targets[m_target_count++] = t;
    }
    // The request, once for every member asked.
    const size_t n = put_request(q, id);
    for (uint32_t t = 0; t < m_target_count; ++t)
        (void)send(m_targets[t].ip, m_targets[t].port, { g_out, n });
    if (m_target_count == 0)
        finish();
}

} // namespace clusterd

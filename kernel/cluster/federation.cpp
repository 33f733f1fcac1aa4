#include "federation.h"

#include "consensus.h"
#include "fed_desk.h"
#include "peer_channel.h"
#include <abi/sys.h>
#include <abi/vector.h>

#include <cstring>

#include <ktl/le_bytes.h>
#include <new>

namespace clusterd {
namespace {

enum Type : uint8_t { kAsk = 1, kAnswer = 2 };
enum Status : uint8_t { kHits = 0, kNone = 1, kUnfit = 2 };
constexpr uint8_t kNoMetric = 0xff; // an answer without a collection

constexpr size_t kAskHeader = 4 + 4 * 4 + 1;
constexpr size_t kAnswerHeader = 4 + 4 + 4;
constexpr size_t kHit = 12;
constexpr uint32_t kDefaultDeadlineMs = 2000;
static_assert(kAskHeader + 64 + fed::kMaxDim * sizeof(float) <= Federation::kMaxMessage);
static_assert(kAnswerHeader + cluster_abi::kFedMaxK * kHit + 1 + 31 <= Federation::kMaxMessage);

alignas(raftwire::Reassembler) unsigned char g_reassemblers[Federation::kSenders][sizeof(raftwire::Reassembler)];
uint8_t g_storage[Federation::kSenders][Federation::kMaxMessage];
alignas(8) uint8_t g_out[Federation::kMaxMessage]; // the message being sent (one task)
alignas(8) float g_query[fed::kMaxDim];            // a query being asked or served
abi::Hit g_hits[cluster_abi::kFedMaxK];

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
    return send_sealed(m_endpoint, ip, port, h, message, m_key);
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
    if (message.size() >= 4 && message[0] == kAsk && get_le(message.data() + 1, 3) == 0)
        serve(ip, port, message);
    else if (message.size() >= 4 && message[0] == kAnswer)
        answered(ip, message);
}

uint8_t Federation::search_here(const char* name, size_t name_len, uint32_t k, uint32_t ef, uint32_t dim,
                                const float* query, uint32_t& count, bool& replicated, uint8_t& metric) {
    count = 0;
    replicated = false;
    metric = kNoMetric;
    const int64_t slot = sys::store_open(m_store, name, name_len, abi::kRead);
    if (slot < 0)
        return kNone;
    abi::VectorStats st {};
    uint8_t status = kUnfit;
    if (sys::vec_stats(static_cast<uint64_t>(slot), &st) >= 0 && st.dim == dim) {
        replicated = st.replicated != 0;
        metric = static_cast<uint8_t>(st.metric);
        const int64_t n = sys::vec_search(static_cast<uint64_t>(slot), query, k, ef < k ? k : ef, g_hits, nullptr);
        if (n >= 0) {
            count = static_cast<uint32_t>(n);
            status = kHits;
        }
    }
    sys::cap_delete(static_cast<uint64_t>(slot));
    return status;
}

// Another node's search: this node's own top k, answered to it.
void Federation::serve(uint32_t ip, uint16_t port, std::span<const uint8_t> m) {
    if (m.size() < kAskHeader)
        return;
    const uint32_t id = static_cast<uint32_t>(get_le(m.data() + 4, 4)),
                   k = static_cast<uint32_t>(get_le(m.data() + 8, 4)),
                   ef = static_cast<uint32_t>(get_le(m.data() + 12, 4)),
                   dim = static_cast<uint32_t>(get_le(m.data() + 16, 4));
    const uint8_t name_len = m[20];
    if (k == 0 || k > cluster_abi::kFedMaxK || dim == 0 || dim > fed::kMaxDim || name_len == 0 ||
        name_len > abi::kMaxNameLength || m.size() != kAskHeader + name_len + size_t(dim) * sizeof(float))
        return;
    const char* name = reinterpret_cast<const char*>(m.data() + kAskHeader);
    if (!abi::valid_collection_name({ name, name_len }))
        return;
    char name_copy[abi::kMaxNameLength + 1];
    std::memcpy(name_copy, name, name_len);
    std::memcpy(g_query, m.data() + kAskHeader + name_len, dim * sizeof(float));
    uint32_t count = 0;
    bool replicated = false;
    uint8_t metric = kNoMetric;
    const uint8_t status = search_here(name_copy, name_len, k, ef, dim, g_query, count, replicated, metric);
    g_out[0] = kAnswer;
    g_out[1] = status;
    g_out[2] = replicated ? 1 : 0;
    g_out[3] = metric;
    put_le(g_out + 4, id, 4);
    put_le(g_out + 8, count, 4);
    size_t at = kAnswerHeader;
    for (uint32_t i = 0; i < count; ++i, at += kHit) {
        put_le(g_out + at, g_hits[i].id, 8);
        uint32_t bits;
        std::memcpy(&bits, &g_hits[i].distance, 4);
        put_le(g_out + at + 8, bits, 4);
    }
    const size_t self_len = std::strlen(m_self);
    g_out[at] = static_cast<uint8_t>(self_len);
    std::memcpy(g_out + at + 1, m_self, self_len);
    at += 1 + self_len;
    ++m_counters.served;
    (void)send(ip, port, { g_out, at });
}

// Two hits are one vector only when they are one id of one node's collection, or one id of two
// replicas of a replicated collection; nodes' own collections of one name are separate id spaces.
void Federation::merge(uint64_t id, float distance, uint32_t node) {
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
    hits[at] = cluster_abi::FedHit { id, distance, node };
    for (; at > 0 && hits[at - 1].distance > hits[at].distance; --at) { // kept in ascending order
        const cluster_abi::FedHit t = hits[at];
        hits[at] = hits[at - 1];
        hits[at - 1] = t;
    }
}

void Federation::answered(uint32_t ip, std::span<const uint8_t> m) {
    if (m_id == 0 || m.size() < kAnswerHeader || get_le(m.data() + 4, 4) != m_id)
        return;
    uint32_t t = 0;
    while (t < m_target_count && !(m_targets[t].ip == ip && !m_heard[t]))
        ++t;
    if (t == m_target_count)
        return; // not asked, or heard already
    const uint8_t status = m[1], replicated = m[2], metric = m[3];
    const uint32_t count = static_cast<uint32_t>(get_le(m.data() + 8, 4));
    if (count > m_k || m.size() < kAnswerHeader + size_t(count) * kHit + 1)
        return;
    const size_t name_at = kAnswerHeader + size_t(count) * kHit;
    const uint8_t name_len = m[name_at];
    if (name_len == 0 || name_len > 31 || m.size() != name_at + 1 + name_len)
        return;
    m_heard[t] = 1;
    copy_name(m_targets[t].name, reinterpret_cast<const char*>(m.data() + name_at + 1), name_len);
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
    m_result.partial = m_result.missing || m_truncated ? 1 : 0;
    m_counters.partial += m_result.partial;
    fed::complete(m_id, m_result);
    m_id = 0;
}

void Federation::pump(uint64_t now_ns, std::span<const Target> members) {
    if (m_id != 0) {
        uint32_t heard = 0;
        for (uint32_t t = 0; t < m_target_count; ++t)
            heard += m_heard[t];
        if (heard == m_target_count || now_ns >= m_deadline_ns)
            finish();
        return;
    }
    cluster_abi::FedQuery q {};
    const uint32_t id = fed::take(q, g_query);
    if (id == 0)
        return;
    ++m_counters.searches;
    m_id = id;
    m_k = q.k;
    m_result = cluster_abi::FedResult {};
    const uint64_t deadline_ms = q.deadline_ms ? q.deadline_ms : kDefaultDeadlineMs;
    m_deadline_ns = now_ns + deadline_ms * 1'000'000ull;
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
    size_t n = kAskHeader;
    g_out[0] = kAsk;
    put_le(g_out + 1, 0, 3);
    put_le(g_out + 4, id, 4);
    put_le(g_out + 8, q.k, 4);
    put_le(g_out + 12, q.ef, 4);
    put_le(g_out + 16, q.dim, 4);
    g_out[20] = static_cast<uint8_t>(name_len);
    std::memcpy(g_out + n, q.name, name_len);
    n += name_len;
    std::memcpy(g_out + n, g_query, q.dim * sizeof(float));
    n += q.dim * sizeof(float);
    for (uint32_t t = 0; t < m_target_count; ++t)
        (void)send(m_targets[t].ip, m_targets[t].port, { g_out, n });
    if (m_target_count == 0)
        finish();
}

} // namespace clusterd

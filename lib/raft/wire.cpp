// Raft messages on the wire (wire.h). Writers and readers are bounded by the span they are given;
// every length a peer sends is checked against what is left before it is used.
#include "wire.h"

#include <cstring>
#include <utility>

#include <crypto/hmac_sha256.h>
#include <ktl/be_stream.h>

namespace raftwire {
namespace {

using Writer = ktl::BeWriter;
using Reader = ktl::BeReader;

// Counts what a Writer would write, for payload_size().
class Counter {
public:
    void u8(uint8_t) { m_n += 1; }
    void u16(uint16_t) { m_n += 2; }
    void u32(uint32_t) { m_n += 4; }
    void u64(uint64_t) { m_n += 8; }
    void bytes(const void*, size_t n) { m_n += n; }
    bool ok() const { return true; }
    size_t size() const { return m_n; }

private:
    size_t m_n = 0;
};

constexpr uint8_t kFlag0 = 1, kFlag1 = 2;

// The payload of `m` through `w` (a Writer or a Counter); false for what cannot be sent. A
// snapshot's configuration comes encoded (`conf`), as upstream encodes it.
template <typename W>
bool put_message(W& w, const raft_message& m, const raft_buffer& conf) {
    w.u8(static_cast<uint8_t>(m.type));
    switch (m.type) {
    case RAFT_REQUEST_VOTE: {
        const auto& r = m.request_vote;
        w.u8(r.version);
        w.u64(r.term);
        w.u64(r.candidate_id);
        w.u64(r.last_log_index);
        w.u64(r.last_log_term);
        w.u8(static_cast<uint8_t>((r.disrupt_leader ? kFlag0 : 0) | (r.pre_vote ? kFlag1 : 0)));
        return true;
    }
    case RAFT_REQUEST_VOTE_RESULT: {
        const auto& r = m.request_vote_result;
        w.u8(r.version);
        w.u64(r.term);
        w.u8(static_cast<uint8_t>((r.vote_granted ? kFlag0 : 0) | (r.pre_vote ? kFlag1 : 0)));
        w.u16(r.features);
        w.u16(r.capacity);
        return true;
    }
    case RAFT_APPEND_ENTRIES: {
        const auto& a = m.append_entries;
        if (a.n_entries > kMaxEntries || (a.n_entries && !a.entries))
            return false;
        w.u8(a.version);
        w.u64(a.term);
        w.u64(a.prev_log_index);
        w.u64(a.prev_log_term);
        w.u64(a.leader_commit);
        w.u32(a.n_entries);
        for (unsigned i = 0; i < a.n_entries; ++i) {
            const raft_entry& e = a.entries[i];
            if (e.buf.len > UINT32_MAX || (e.buf.len && !e.buf.base))
                return false;
            w.u64(e.term);
            w.u8(static_cast<uint8_t>(e.type));
            w.u32(static_cast<uint32_t>(e.buf.len));
            w.bytes(e.buf.base, e.buf.len);
        }
        return true;
    }
    case RAFT_APPEND_ENTRIES_RESULT: {
        const auto& r = m.append_entries_result;
        w.u8(r.version);
        w.u64(r.term);
        w.u64(r.rejected);
        w.u64(r.last_log_index);
        w.u16(r.features);
        w.u16(r.capacity);
        return true;
    }
    case RAFT_INSTALL_SNAPSHOT: {
        const auto& s = m.install_snapshot;
        if (conf.len > UINT32_MAX || s.data.len > UINT32_MAX || (s.data.len && !s.data.base))
            return false;
        w.u8(s.version);
        w.u64(s.term);
        w.u64(s.last_index);
        w.u64(s.last_term);
        w.u64(s.conf_index);
        w.u32(static_cast<uint32_t>(conf.len));
        w.bytes(conf.base, conf.len);
        w.u32(static_cast<uint32_t>(s.data.len));
        w.bytes(s.data.base, s.data.len);
        return true;
    }
    case RAFT_TIMEOUT_NOW: {
        const auto& t = m.timeout_now;
        w.u8(t.version);
        w.u64(t.term);
        w.u64(t.last_log_index);
        w.u64(t.last_log_term);
        return true;
    }
    }
    return false;
}

// A snapshot's configuration as upstream encodes it (raft_malloc'd; empty for other types).
bool encoded_conf(const raft_message& m, raft_buffer& out) {
    out = raft_buffer {};
    if (m.type != RAFT_INSTALL_SNAPSHOT)
        return true;
    return raft_configuration_encode(&m.install_snapshot.conf, &out) == 0;
}

bool flags_ok(uint8_t flags) { return (flags & ~(kFlag0 | kFlag1)) == 0; }

Verdict read_entries(Reader& r, raft_append_entries& a) {
    const uint32_t n = r.u32();
    // Every entry takes at least 13 bytes: a count beyond what is left is refused before any
    // allocation is sized by it.
    if (!r.ok() || n > kMaxEntries || n > r.left() / 13)
        return Verdict::Malformed;
    a.n_entries = n;
    a.entries = nullptr;
    if (n == 0)
        return Verdict::Accepted;
    // First pass: the shape and the data's total; second: the copy into one batch.
    Reader probe = r;
    size_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
        probe.u64();
        uint8_t type = probe.u8();
        uint32_t len = probe.u32();
        probe.bytes(len);
        if (!probe.ok() || type < RAFT_COMMAND || type > RAFT_CHANGE)
            return Verdict::Malformed;
        total += len;
    }
    auto* entries = static_cast<raft_entry*>(raft_malloc(sizeof(raft_entry) * n));
    auto* batch = static_cast<uint8_t*>(raft_malloc(total ? total : 1));
    if (!entries || !batch) {
        raft_free(entries);
        raft_free(batch);
        return Verdict::Malformed; // no memory: as good as not received (the leader sends again)
    }
    size_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        entries[i].term = r.u64();
        entries[i].type = static_cast<raft_entry_type>(r.u8());
        const uint32_t len = r.u32();
        auto data = r.bytes(len);
        if (len)
            std::memcpy(batch + at, data.data(), len);
        entries[i].buf.base = batch + at;
        entries[i].buf.len = len;
        entries[i].batch = batch;
        at += len;
    }
    a.entries = entries;
    return Verdict::Accepted;
}

Verdict read_snapshot(Reader& r, raft_install_snapshot& s) {
    s.version = r.u8();
    s.term = r.u64();
    s.last_index = r.u64();
    s.last_term = r.u64();
    s.conf_index = r.u64();
    auto conf = r.bytes(r.u32());
    auto data = r.bytes(r.u32());
    if (!r.at_end())
        return Verdict::Malformed;
    raft_configuration_init(&s.conf);
    // Upstream's decoder reads the configuration from a buffer it may not change; a copy keeps
    // the datagram's storage out of its hands.
    raft_buffer cbuf { raft_malloc(conf.size() ? conf.size() : 1), conf.size() };
    if (!cbuf.base)
        return Verdict::Malformed;
    if (!conf.empty())
        std::memcpy(cbuf.base, conf.data(), conf.size());
    const int rc = conf.empty() ? RAFT_MALFORMED : raft_configuration_decode(&cbuf, &s.conf);
    raft_free(cbuf.base);
    if (rc != 0) {
        raft_configuration_close(&s.conf);
        raft_configuration_init(&s.conf);
        return Verdict::Malformed;
    }
    s.data.base = raft_malloc(data.size() ? data.size() : 1);
    s.data.len = data.size();
    if (!s.data.base) {
        raft_configuration_close(&s.conf);
        return Verdict::Malformed;
    }
    if (!data.empty())
        std::memcpy(s.data.base, data.data(), data.size());
    return Verdict::Accepted;
}

void put_header(Writer& w, const FrameHeader& h) {
    w.u32(kMagic);
    w.u8(kVersion);
    w.u64(h.group);
    w.u64(h.from);
    w.u64(h.to);
    w.u64(h.epoch);
    w.u64(h.seq);
    w.u16(h.fragment);
    w.u16(h.fragments);
    w.u32(h.total);
}

// The payload bytes fragment `index` of a message of `total` bytes carries.
constexpr size_t share(size_t total, size_t index) {
    const size_t start = index * kFragmentPayload;
    return start >= total ? 0 : (total - start < kFragmentPayload ? total - start : kFragmentPayload);
}

bool tags_equal(const uint8_t* a, const uint8_t* b) {
    uint8_t diff = 0; // every byte compared: no early exit to time
    for (size_t i = 0; i < kTagLen; ++i)
        diff |= static_cast<uint8_t>(a[i] ^ b[i]);
    return diff == 0;
}

} // namespace

size_t payload_size(const raft_message& m) {
    raft_buffer conf;
    if (!encoded_conf(m, conf))
        return 0;
    Counter c;
    const bool ok = put_message(c, m, conf);
    raft_free(conf.base);
    return ok && c.size() <= kMaxPayload ? c.size() : 0;
}

size_t encode(const raft_message& m, std::span<uint8_t> out) {
    raft_buffer conf;
    if (!encoded_conf(m, conf))
        return 0;
    Writer w(out);
    const bool ok = put_message(w, m, conf);
    raft_free(conf.base);
    return ok && w.ok() && w.size() <= kMaxPayload ? w.size() : 0;
}

Verdict decode(std::span<const uint8_t> payload, raft_message& out) {
    out = raft_message {};
    Reader r(payload);
    const uint8_t type = r.u8();
    switch (type) {
    case RAFT_REQUEST_VOTE: {
        auto& v = out.request_vote;
        v.version = r.u8();
        v.term = r.u64();
        v.candidate_id = r.u64();
        v.last_log_index = r.u64();
        v.last_log_term = r.u64();
        const uint8_t flags = r.u8();
        v.disrupt_leader = flags & kFlag0;
        v.pre_vote = flags & kFlag1;
        if (!r.at_end() || !flags_ok(flags))
            return Verdict::Malformed;
        break;
    }
    case RAFT_REQUEST_VOTE_RESULT: {
        auto& v = out.request_vote_result;
        v.version = r.u8();
        v.term = r.u64();
        const uint8_t flags = r.u8();
        v.vote_granted = flags & kFlag0;
        v.pre_vote = flags & kFlag1;
        v.features = r.u16();
        v.capacity = r.u16();
        if (!r.at_end() || !flags_ok(flags))
            return Verdict::Malformed;
        break;
    }
    case RAFT_APPEND_ENTRIES: {
        auto& a = out.append_entries;
        a.version = r.u8();
        a.term = r.u64();
        a.prev_log_index = r.u64();
        a.prev_log_term = r.u64();
        a.leader_commit = r.u64();
        if (Verdict v = read_entries(r, a); v != Verdict::Accepted)
            return v;
        if (!r.at_end()) {
            out.type = RAFT_APPEND_ENTRIES;
            release(out);
            return Verdict::Malformed;
        }
        break;
    }
    case RAFT_APPEND_ENTRIES_RESULT: {
        auto& a = out.append_entries_result;
        a.version = r.u8();
        a.term = r.u64();
        a.rejected = r.u64();
        a.last_log_index = r.u64();
        a.features = r.u16();
        a.capacity = r.u16();
        if (!r.at_end())
            return Verdict::Malformed;
        break;
    }
    case RAFT_INSTALL_SNAPSHOT:
        if (Verdict v = read_snapshot(r, out.install_snapshot); v != Verdict::Accepted)
            return v;
        break;
    case RAFT_TIMEOUT_NOW: {
        auto& t = out.timeout_now;
        t.version = r.u8();
        t.term = r.u64();
        t.last_log_index = r.u64();
        t.last_log_term = r.u64();
        if (!r.at_end())
            return Verdict::Malformed;
        break;
    }
    default: return Verdict::Malformed;
    }
    out.type = static_cast<raft_message_type>(type);
    return Verdict::Accepted;
}

void release(raft_message& m) {
    if (m.type == RAFT_APPEND_ENTRIES && m.append_entries.n_entries && m.append_entries.entries) {
        raft_free(m.append_entries.entries[0].batch);
        raft_free(m.append_entries.entries);
    } else if (m.type == RAFT_INSTALL_SNAPSHOT) {
        raft_configuration_close(&m.install_snapshot.conf);
        raft_free(m.install_snapshot.data.base);
    }
    m = raft_message {};
}

size_t seal(const FrameHeader& h, std::span<const uint8_t> payload, Key key, std::span<uint8_t> out) {
    if (payload.size() != h.total || h.fragments != fragment_count(h.total) || h.fragment >= h.fragments)
        return 0;
    const size_t n = share(h.total, h.fragment);
    Writer w(out);
    put_header(w, h);
    w.bytes(payload.data() + size_t(h.fragment) * kFragmentPayload, n);
    if (!w.ok() || out.size() - w.size() < kTagLen)
        return 0;
    const size_t body = w.size();
    const auto tag = crypto::hmac_sha256(key, out.first(body));
    std::memcpy(out.data() + body, tag.data(), kTagLen);
    return body + kTagLen;
}

uint64_t peek_group(std::span<const uint8_t> datagram) {
    if (datagram.size() < kHeaderLen + kTagLen)
        return 0;
    Reader r(datagram);
    if (r.u32() != kMagic)
        return 0;
    (void)r.u8();
    return r.u64();
}

Verdict open(std::span<const uint8_t> datagram, Key key, FrameHeader& h, std::span<const uint8_t>& slice) {
    if (datagram.size() < kHeaderLen + kTagLen || datagram.size() > kMaxDatagram)
        return Verdict::Malformed;
    Reader r(datagram.first(datagram.size() - kTagLen));
    if (r.u32() != kMagic)
        return Verdict::Malformed;
    const auto tag = crypto::hmac_sha256(key, datagram.first(datagram.size() - kTagLen));
    if (!tags_equal(tag.data(), datagram.data() + datagram.size() - kTagLen))
        return Verdict::BadMac;
    if (r.u8() != kVersion)
        return Verdict::WrongVersion;
    h.group = r.u64();
    h.from = r.u64();
    h.to = r.u64();
    h.epoch = r.u64();
    h.seq = r.u64();
    h.fragment = r.u16();
    h.fragments = r.u16();
    h.total = r.u32();
    slice = r.bytes(r.left());
    if (!r.at_end() || h.fragments != fragment_count(h.total) || h.fragment >= h.fragments ||
        slice.size() != share(h.total, h.fragment) || h.seq == 0)
        return Verdict::Malformed;
    return Verdict::Accepted;
}

void Reassembler::start(const FrameHeader& h) {
    if (m_open)
        ++m_dropped;
    m_open = true;
    m_epoch = h.epoch;
    m_seq = h.seq;
    m_fragments = h.fragments;
    m_received = 0;
    m_total = h.total;
    std::memset(m_seen, 0, size_t(h.fragments) / 8 + 1);
}

Reassembler::Result Reassembler::feed(const FrameHeader& h, std::span<const uint8_t> slice) {
    const auto order = [](uint64_t e, uint64_t s) { return std::pair<uint64_t, uint64_t>(e, s); };
    if (m_delivered_any && order(h.epoch, h.seq) <= order(m_last_epoch, m_last_seq))
        return Result::Stale;
    if (m_open && order(h.epoch, h.seq) < order(m_epoch, m_seq))
        return Result::Stale; // older than the message being put together: overtaken
    if (!m_open || order(h.epoch, h.seq) > order(m_epoch, m_seq)) {
        if (h.total > m_storage.size()) {
            if (m_open)
                ++m_dropped;
            m_open = false;
            return Result::Refused;
        }
        start(h);
    }
    if (h.total != m_total || h.fragments != m_fragments || h.fragment >= m_fragments ||
        slice.size() != share(h.total, h.fragment)) {
        m_open = false; // the sender contradicts itself: nothing of this message is kept
        ++m_dropped;
        return Result::Refused;
    }
    if (have(h.fragment))
        return Result::Partial; // a duplicate
    if (!slice.empty())
        std::memcpy(m_storage.data() + size_t(h.fragment) * kFragmentPayload, slice.data(), slice.size());
    m_seen[h.fragment / 8] = static_cast<uint8_t>(m_seen[h.fragment / 8] | (1u << (h.fragment % 8)));
    if (++m_received < m_fragments)
        return Result::Partial;
    m_open = false;
    m_delivered_any = true;
    m_last_epoch = m_epoch;
    m_last_seq = m_seq;
    return Result::Complete;
}

} // namespace raftwire

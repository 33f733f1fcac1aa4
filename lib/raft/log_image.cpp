#include "log_image.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace raftlog {
namespace {

using ktl::get_le;
using ktl::put_le;

constexpr size_t padded(size_t n) { return (n + 7) & ~size_t(7); }
const std::byte kZeros[8] = {};

} // namespace

// Where a stream's bytes go: counted, and those inside [offset, offset + out.size()) copied.
class Window {
public:
    Window(std::span<std::byte> out, uint64_t offset) : m_out(out), m_offset(offset) {}
    void put(const std::byte* p, size_t n) {
        const uint64_t end = m_at + n;
        const uint64_t lo = m_at > m_offset ? m_at : m_offset;
        const uint64_t hi = end < m_offset + m_out.size() ? end : m_offset + m_out.size();
        if (lo < hi) {
            std::memcpy(m_out.data() + (lo - m_offset), p + (lo - m_at), hi - lo);
            m_copied += hi - lo;
        }
        m_at = end;
    }
    uint64_t at() const { return m_at; }
    size_t copied() const { return m_copied; }

private:
    std::span<std::byte> m_out;
    uint64_t m_offset;
    uint64_t m_at = 0;
    size_t m_copied = 0;
};

namespace {

void put_header(Window& w, Kind kind, size_t len) {
    std::byte h[kStreamHeader] = {};
    h[0] = std::byte(kind);
    put_le<uint32_t>(h + 4, static_cast<uint32_t>(len));
    w.put(h, sizeof h);
}

} // namespace

EntryView Image::entry(uint64_t index) const {
    const Entry& e = m_log[index - m_start];
    return { e.term, e.type, { e.data, e.len } };
}

void Image::reset() {
    if (m_log) {
        truncate(m_start);
        m_memory->free(m_log);
        m_log = nullptr;
    }
    drop_snapshot();
    m_term = m_vote = 0;
    m_start = 1;
}

void Image::drop_snapshot() {
    if (!m_snap.conf.empty())
        m_memory->free(const_cast<std::byte*>(m_snap.conf.data()));
    if (!m_snap.data.empty())
        m_memory->free(const_cast<std::byte*>(m_snap.data.data()));
    m_snap = {};
}

bool Image::set_snapshot(const SnapshotView& s, uint64_t start) {
    // Copies first: a snapshot that cannot be kept changes nothing.
    auto* conf = static_cast<std::byte*>(m_memory->alloc(s.conf.size()));
    auto* data = s.data.empty() ? nullptr : static_cast<std::byte*>(m_memory->alloc(s.data.size()));
    if (!conf || (!s.data.empty() && !data)) {
        if (conf)
            m_memory->free(conf);
        if (data)
            m_memory->free(data);
        return false;
    }
    std::memcpy(conf, s.conf.data(), s.conf.size());
    if (data)
        std::memcpy(data, s.data.data(), s.data.size());
    drop_snapshot();
    m_snap = { s.index, s.term, s.conf_index, { conf, s.conf.size() }, { data, s.data.size() } };
    if (start >= next_index()) {
        truncate(m_start);
        m_start = start;
        return true;
    }
    // Entries before `start` go; the rest move to the front.
    size_t drop = static_cast<size_t>(start > m_start ? start - m_start : 0);
    for (size_t i = 0; i < drop; ++i)
        if (m_log[i].data)
            m_memory->free(m_log[i].data);
    for (size_t i = drop; i < m_count; ++i)
        m_log[i - drop] = m_log[i];
    m_count -= drop;
    m_start += drop;
    return true;
}

bool Image::set_term(uint64_t term, uint64_t vote) {
    m_term = term;
    m_vote = vote;
    return true;
}

bool Image::append(const EntryView& e) {
    if (m_count == kMaxImageEntries || e.data.size() > kMaxEntryBytes)
        return false;
    if (!m_log) {
        m_log = static_cast<Entry*>(m_memory->alloc(sizeof(Entry) * kMaxImageEntries));
        if (!m_log)
            return false;
    }
    std::byte* data = nullptr;
    if (!e.data.empty()) {
        data = static_cast<std::byte*>(m_memory->alloc(e.data.size()));
        if (!data)
            return false;
        std::memcpy(data, e.data.data(), e.data.size());
    }
    m_log[m_count++] = Entry { e.term, e.type, data, static_cast<uint32_t>(e.data.size()) };
    return true;
}

bool Image::truncate(uint64_t index) {
    while (m_count > 0 && m_start + m_count - 1 >= index) {
        --m_count;
        if (m_log[m_count].data)
            m_memory->free(m_log[m_count].data);
    }
    return true;
}

// The stream once: a Term record, the Snapshot record (its trailing count gives the log's start
// back), then Appends of as many entries as fit kStreamAppendBytes (at least one each).
void Image::walk(Window& w) const {
    if (m_term) {
        std::byte term[kTermBytes];
        (void)encode_term(term, m_group, m_term, m_vote);
        put_header(w, Kind::Term, kTermBytes);
        w.put(term, sizeof term);
    }
    if (m_snap.index) {
        const uint64_t trailing = m_start <= m_snap.index ? m_snap.index - m_start + 1 : 0;
        std::byte fixed[kSnapshotFixed] = {};
        put_le<uint64_t>(fixed, m_group);
        put_le<uint64_t>(fixed + 8, m_snap.index);
        put_le<uint64_t>(fixed + 16, m_snap.term);
        put_le<uint64_t>(fixed + 24, m_snap.conf_index);
        put_le<uint32_t>(fixed + 32, static_cast<uint32_t>(trailing));
        put_le<uint32_t>(fixed + 36, static_cast<uint32_t>(m_snap.conf.size()));
        put_le<uint32_t>(fixed + 40, static_cast<uint32_t>(m_snap.data.size()));
        put_header(w, Kind::Snapshot, snapshot_bytes(m_snap.conf.size(), m_snap.data.size()));
        w.put(fixed, sizeof fixed);
        for (auto part : { m_snap.conf, m_snap.data }) {
            if (!part.empty())
                w.put(part.data(), part.size());
            w.put(kZeros, padded(part.size()) - part.size());
        }
    }
    for (size_t first = 0; first < m_count;) {
        size_t bytes = kAppendFixed, last = first;
        do
            bytes += kEntryFixed + padded(m_log[last++].len);
        while (last < m_count && last - first < kMaxEntries &&
               bytes + kEntryFixed + padded(m_log[last].len) <= kStreamAppendBytes);
        put_header(w, Kind::Append, bytes);
        std::byte fixed[kAppendFixed] = {};
        put_le<uint64_t>(fixed, m_group);
        put_le<uint64_t>(fixed + 8, m_start + first);
        put_le<uint32_t>(fixed + 16, static_cast<uint32_t>(last - first));
        w.put(fixed, sizeof fixed);
        for (size_t i = first; i < last; ++i) {
            const Entry& e = m_log[i];
            std::byte h[kEntryFixed] = {};
            put_le<uint64_t>(h, e.term);
            h[8] = std::byte(e.type);
            put_le<uint32_t>(h + 12, e.len);
            w.put(h, sizeof h);
            if (e.len)
                w.put(e.data, e.len);
            w.put(kZeros, padded(e.len) - e.len);
        }
        first = last;
    }
}

size_t Image::stream_copy(std::span<std::byte> out, uint64_t offset) const {
    if (empty())
        return 0;
    Window w(out, offset);
    walk(w);
    return w.copied();
}

size_t Image::stream_bytes() const {
    if (empty())
        return 0;
    Window w({}, 0);
    walk(w);
    return static_cast<size_t>(w.at());
}

ktl::Error Images::apply(Kind kind, std::span<const std::byte> payload) {
    auto d = decode(kind, payload);
    if (!d)
        return ktl::Error::Corrupt;
    size_t slot = kMaxGroups;
    for (size_t i = 0; i < kMaxGroups; ++i)
        if (m_used[i] && m_images[i].group() == d->group)
            slot = i;
    if (kind == Kind::Forget) { // (a group this node never held: nothing to drop)
        if (slot != kMaxGroups) {
            m_images[slot].reset();
            m_used[slot] = false;
        }
        return ktl::Error::None;
    }
    if (slot == kMaxGroups) {
        for (size_t i = 0; i < kMaxGroups && slot == kMaxGroups; ++i)
            if (!m_used[i])
                slot = i;
        if (slot == kMaxGroups)
            return ktl::Error::Full;
        m_images[slot].bind(m_memory, d->group);
        m_used[slot] = true;
    }
    const ktl::Error e = replay(*d, m_images[slot]);
    if (e != ktl::Error::None && m_images[slot].empty())
        m_used[slot] = false; // a group whose first record was refused takes no slot
    return e;
}

namespace {

// Calls fn(kind, payload) for each record of the stream, in order, until it returns an error.
template <typename Fn>
ktl::Error for_each_record(std::span<const std::byte> stream, Fn&& fn) {
    while (!stream.empty()) {
        if (stream.size() < kStreamHeader)
            return ktl::Error::Corrupt;
        const uint8_t kind = uint8_t(stream[0]);
        const uint32_t len = get_le<uint32_t>(stream.data() + 4);
        if (kind < uint8_t(Kind::Term) || kind > uint8_t(Kind::Snapshot) || stream[1] != std::byte(0) ||
            stream[2] != std::byte(0) || stream[3] != std::byte(0) || padded(len) > stream.size() - kStreamHeader)
            return ktl::Error::Corrupt;
        for (size_t i = len; i < padded(len); ++i)
            if (stream[kStreamHeader + i] != std::byte(0))
                return ktl::Error::Corrupt;
        const ktl::Error e = fn(Kind(kind), stream.subspan(kStreamHeader, len));
        if (e != ktl::Error::None)
            return e == ktl::Error::NoMemory ? e : ktl::Error::Corrupt;
        stream = stream.subspan(kStreamHeader + padded(len));
    }
    return ktl::Error::None;
}

} // namespace

ktl::Error Images::apply_stream(std::span<const std::byte> stream) {
    return for_each_record(stream,
                           [this](Kind kind, std::span<const std::byte> payload) { return apply(kind, payload); });
}

ktl::Error replay_stream(std::span<const std::byte> stream, uint64_t group, Target& t) {
    return for_each_record(stream, [&](Kind kind, std::span<const std::byte> payload) {
        auto d = decode(kind, payload);
        if (!d)
            return ktl::Error::Corrupt;
        return d->group == group ? replay(*d, t) : ktl::Error::None;
    });
}

const Image* Images::find(uint64_t group) const {
    for (size_t i = 0; i < kMaxGroups; ++i)
        if (m_used[i] && m_images[i].group() == group)
            return &m_images[i];
    return nullptr;
}

size_t Images::stream_bytes(uint64_t group) const {
    size_t n = 0;
    for (size_t i = 0; i < kMaxGroups; ++i)
        if (m_used[i] && (group == kAll || m_images[i].group() == group))
            n += m_images[i].stream_bytes();
    return n;
}

size_t Images::stream_copy(uint64_t group, std::span<std::byte> out, uint64_t offset) const {
    size_t copied = 0;
    uint64_t base = 0; // where this image's stream starts in the whole
    for (size_t i = 0; i < kMaxGroups; ++i) {
        if (!m_used[i] || (group != kAll && m_images[i].group() != group))
            continue;
        const size_t bytes = m_images[i].stream_bytes();
        const uint64_t lo = offset > base ? offset : base;
        const uint64_t hi = offset + out.size() < base + bytes ? offset + out.size() : base + bytes;
        if (lo < hi)
            copied += m_images[i].stream_copy(out.subspan(lo - offset, hi - lo), lo - base);
        base += bytes;
    }
    return copied;
}

size_t Images::groups() const {
    size_t n = 0;
    for (size_t i = 0; i < kMaxGroups; ++i)
        n += m_used[i] ? 1 : 0;
    return n;
}

size_t Images::entries() const {
    size_t n = 0;
    for (size_t i = 0; i < kMaxGroups; ++i)
        n += m_used[i] ? m_images[i].entries() : 0;
    return n;
}

void Images::clear() {
    for (size_t i = 0; i < kMaxGroups; ++i)
        if (m_used[i]) {
            m_images[i].reset();
            m_used[i] = false;
        }
}

} // namespace raftlog

#include "log_records.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace raftlog {
namespace {

using ktl::get_le;
using ktl::put_le;

constexpr size_t padded(size_t n) { return (n + 7) & ~size_t(7); }

bool type_ok(uint8_t type) { return type >= kMinEntryType && type <= kMaxEntryType; }

// One entry at the front of `rest`: its view and the bytes it takes, or 0 if it does not add up.
size_t read_entry(std::span<const std::byte> rest, EntryView& e) {
    if (rest.size() < kEntryFixed)
        return 0;
    const std::byte* p = rest.data();
    e.term = get_le<uint64_t>(p);
    e.type = uint8_t(p[8]);
    const uint32_t len = get_le<uint32_t>(p + 12);
    if (e.term == 0 || !type_ok(e.type) || p[9] != std::byte(0) || p[10] != std::byte(0) || p[11] != std::byte(0) ||
        len > kMaxEntryBytes || padded(len) > rest.size() - kEntryFixed)
        return 0;
    for (size_t i = len; i < padded(len); ++i)
        if (p[kEntryFixed + i] != std::byte(0))
            return 0;
    e.data = rest.subspan(kEntryFixed, len);
    return kEntryFixed + padded(len);
}

} // namespace

size_t append_bytes(std::span<const EntryView> entries) {
    if (entries.empty() || entries.size() > kMaxEntries)
        return 0;
    size_t n = kAppendFixed;
    for (const EntryView& e : entries) {
        if (e.data.size() > kMaxEntryBytes)
            return 0;
        n += kEntryFixed + padded(e.data.size());
    }
    return n;
}

ktl::Result<size_t> encode_term(std::span<std::byte> out, uint64_t group, uint64_t term, uint64_t vote) {
    if (term == 0)
        return ktl::Error::InvalidArgs;
    if (out.size() < kTermBytes)
        return ktl::Error::OutOfRange;
    put_le<uint64_t>(out.data(), group);
    put_le<uint64_t>(out.data() + 8, term);
    put_le<uint64_t>(out.data() + 16, vote);
    return kTermBytes;
}

ktl::Result<size_t> encode_append(std::span<std::byte> out, uint64_t group, uint64_t first_index,
                                  std::span<const EntryView> entries) {
    const size_t need = append_bytes(entries);
    if (need == 0 || first_index == 0)
        return ktl::Error::InvalidArgs;
    for (const EntryView& e : entries)
        if (e.term == 0 || !type_ok(e.type))
            return ktl::Error::InvalidArgs;
    if (out.size() < need)
        return ktl::Error::OutOfRange;
    std::byte* p = out.data();
    put_le<uint64_t>(p, group);
    put_le<uint64_t>(p + 8, first_index);
    put_le<uint32_t>(p + 16, static_cast<uint32_t>(entries.size()));
    put_le<uint32_t>(p + 20, 0);
    p += kAppendFixed;
    for (const EntryView& e : entries) {
        put_le<uint64_t>(p, e.term);
        p[8] = std::byte(e.type);
        std::memset(p + 9, 0, 3);
        put_le<uint32_t>(p + 12, static_cast<uint32_t>(e.data.size()));
        if (!e.data.empty())
            std::memcpy(p + kEntryFixed, e.data.data(), e.data.size());
        std::memset(p + kEntryFixed + e.data.size(), 0, padded(e.data.size()) - e.data.size());
        p += kEntryFixed + padded(e.data.size());
    }
    return need;
}

ktl::Result<size_t> encode_truncate(std::span<std::byte> out, uint64_t group, uint64_t index) {
    if (index == 0)
        return ktl::Error::InvalidArgs;
    if (out.size() < kTruncateBytes)
        return ktl::Error::OutOfRange;
    put_le<uint64_t>(out.data(), group);
    put_le<uint64_t>(out.data() + 8, index);
    return kTruncateBytes;
}

ktl::Result<size_t> encode_forget(std::span<std::byte> out, uint64_t group) {
    if (out.size() < kForgetBytes)
        return ktl::Error::OutOfRange;
    put_le<uint64_t>(out.data(), group);
    return kForgetBytes;
}

size_t snapshot_bytes(size_t conf, size_t data) {
    if (conf > kMaxSnapshotConf || data > kMaxSnapshotData)
        return 0;
    return kSnapshotFixed + padded(conf) + padded(data);
}

ktl::Result<size_t> encode_snapshot(std::span<std::byte> out, uint64_t group, const SnapshotView& s,
                                    uint32_t trailing) {
    const size_t need = snapshot_bytes(s.conf.size(), s.data.size());
    if (need == 0 || s.index == 0 || s.term == 0 || s.conf.empty())
        return ktl::Error::InvalidArgs;
    if (out.size() < need)
        return ktl::Error::OutOfRange;
    std::byte* p = out.data();
    put_le<uint64_t>(p, group);
    put_le<uint64_t>(p + 8, s.index);
    put_le<uint64_t>(p + 16, s.term);
    put_le<uint64_t>(p + 24, s.conf_index);
    put_le<uint32_t>(p + 32, trailing);
    put_le<uint32_t>(p + 36, static_cast<uint32_t>(s.conf.size()));
    put_le<uint32_t>(p + 40, static_cast<uint32_t>(s.data.size()));
    put_le<uint32_t>(p + 44, 0);
    p += kSnapshotFixed;
    std::memcpy(p, s.conf.data(), s.conf.size());
    std::memset(p + s.conf.size(), 0, padded(s.conf.size()) - s.conf.size());
    p += padded(s.conf.size());
    if (!s.data.empty())
        std::memcpy(p, s.data.data(), s.data.size());
    std::memset(p + s.data.size(), 0, padded(s.data.size()) - s.data.size());
    return need;
}

namespace {
bool zero_padded(std::span<const std::byte> bytes, size_t used) {
    for (size_t i = used; i < bytes.size(); ++i)
        if (bytes[i] != std::byte(0))
            return false;
    return true;
}
} // namespace

ktl::Result<Decoded> decode(Kind kind, std::span<const std::byte> payload) {
    Decoded d {};
    d.kind = kind;
    const std::byte* p = payload.data();
    switch (kind) {
    case Kind::Term:
        if (payload.size() != kTermBytes)
            return ktl::Error::Corrupt;
        d.group = get_le<uint64_t>(p);
        d.term = get_le<uint64_t>(p + 8);
        d.vote = get_le<uint64_t>(p + 16);
        if (d.term == 0)
            return ktl::Error::Corrupt;
        return d;
    case Kind::Truncate:
        if (payload.size() != kTruncateBytes)
            return ktl::Error::Corrupt;
        d.group = get_le<uint64_t>(p);
        d.index = get_le<uint64_t>(p + 8);
        if (d.index == 0)
            return ktl::Error::Corrupt;
        return d;
    case Kind::Forget:
        if (payload.size() != kForgetBytes)
            return ktl::Error::Corrupt;
        d.group = get_le<uint64_t>(p);
        return d;
    case Kind::Snapshot: {
        if (payload.size() < kSnapshotFixed)
            return ktl::Error::Corrupt;
        d.group = get_le<uint64_t>(p);
        d.snapshot.index = get_le<uint64_t>(p + 8);
        d.snapshot.term = get_le<uint64_t>(p + 16);
        d.snapshot.conf_index = get_le<uint64_t>(p + 24);
        d.trailing = get_le<uint32_t>(p + 32);
        const uint32_t conf = get_le<uint32_t>(p + 36);
        const uint32_t data = get_le<uint32_t>(p + 40);
        if (d.snapshot.index == 0 || d.snapshot.term == 0 || d.snapshot.conf_index == 0 ||
            d.snapshot.conf_index > d.snapshot.index || conf == 0 || get_le<uint32_t>(p + 44) != 0 ||
            snapshot_bytes(conf, data) != payload.size())
            return ktl::Error::Corrupt;
        const auto conf_area = payload.subspan(kSnapshotFixed, padded(conf));
        const auto data_area = payload.subspan(kSnapshotFixed + padded(conf));
        if (!zero_padded(conf_area, conf) || !zero_padded(data_area, data))
            return ktl::Error::Corrupt;
        d.snapshot.conf = conf_area.first(conf);
        d.snapshot.data = data_area.first(data);
        return d;
    }
    case Kind::Append: {
        if (payload.size() < kAppendFixed)
            return ktl::Error::Corrupt;
        d.group = get_le<uint64_t>(p);
        d.index = get_le<uint64_t>(p + 8);
        d.count = get_le<uint32_t>(p + 16);
        if (d.index == 0 || d.count == 0 || d.count > kMaxEntries || get_le<uint32_t>(p + 20) != 0)
            return ktl::Error::Corrupt;
        d.entries = payload.subspan(kAppendFixed);
        std::span<const std::byte> rest = d.entries;
        for (uint32_t i = 0; i < d.count; ++i) {
            EntryView e;
            const size_t used = read_entry(rest, e);
            if (used == 0)
                return ktl::Error::Corrupt;
            rest = rest.subspan(used);
        }
        if (!rest.empty()) // nothing after the last entry
            return ktl::Error::Corrupt;
        // (The index of the last entry must not wrap.)
        if (d.index > UINT64_MAX - d.count)
            return ktl::Error::Corrupt;
        return d;
    }
    }
    return ktl::Error::Corrupt;
}

bool EntryReader::next(EntryView& e) {
    if (m_left == 0)
        return false;
    const size_t used = read_entry(m_rest, e);
    if (used == 0)
        return false;
    m_rest = m_rest.subspan(used);
    --m_left;
    return true;
}

ktl::Error replay(const Decoded& d, Target& t) {
    switch (d.kind) {
    case Kind::Term:
        if (d.term < t.term())
            return ktl::Error::Corrupt;
        return t.set_term(d.term, d.vote) ? ktl::Error::None : ktl::Error::NoMemory;
    case Kind::Truncate:
        // (At or before the log's start: the whole log goes, as a snapshot may have moved it.)
        if (d.index > t.next_index())
            return ktl::Error::Corrupt;
        return t.truncate(d.index < t.start() ? t.start() : d.index) ? ktl::Error::None : ktl::Error::NoMemory;
    case Kind::Snapshot: {
        const uint64_t index = d.snapshot.index;
        if (index < t.snapshot_index())
            return ktl::Error::Corrupt;
        uint64_t start = index + 1; // trailing 0: an installed snapshot replaces the whole log
        if (d.trailing == 0 && !t.truncate(t.start()))
            return ktl::Error::NoMemory;
        if (d.trailing != 0) {
            // The entries from keep_from on stay; an empty log (a stream read back) starts there.
            const uint64_t keep_from = index >= d.trailing ? index - d.trailing + 1 : 1;
            start = keep_from > t.start() ? keep_from : t.start();
            if (t.next_index() != t.start() && start > t.next_index())
                start = t.next_index();
        }
        return t.set_snapshot(d.snapshot, start) ? ktl::Error::None : ktl::Error::NoMemory;
    }
    case Kind::Forget: return ktl::Error::Corrupt; // (Images::apply's own)
    case Kind::Append: {
        if (d.index != t.next_index())
            return ktl::Error::Corrupt;
        // All or nothing: a target that could not keep an entry gets none of the record's.
        EntryReader r(d);
        EntryView e;
        while (r.next(e))
            if (!t.append(e)) {
                (void)t.truncate(d.index);
                return ktl::Error::NoMemory;
            }
        return ktl::Error::None;
    }
    }
    return ktl::Error::Corrupt;
}

} // namespace raftlog

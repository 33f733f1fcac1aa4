#include "directory.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace raftdir {
namespace {

constexpr uint8_t kPlaceVersion = 2;
constexpr size_t kPlaceHeaderV1 = 4;
constexpr uint16_t kSnapshotVersion = 2;
constexpr size_t kSnapshotEntryV1 = 8 + 4 * kMaxVoters + kMaxNameLength;
constexpr uint32_t kMagic = 0x52494452; // "RDIR"

bool name_fits(std::string_view name) { return !name.empty() && name.size() <= kMaxNameLength; }

// 3 or 5 voters, none zero, none twice.
bool voters_fit(std::span<const uint32_t> voters) {
    if (voters.size() != 3 && voters.size() != 5)
        return false;
    for (size_t i = 0; i < voters.size(); ++i) {
        if (voters[i] == 0)
            return false;
        for (size_t j = 0; j < i; ++j)
            if (voters[j] == voters[i])
                return false;
    }
    return true;
}

void put_name(std::byte* at, std::string_view name) { std::memcpy(at, name.data(), name.size()); }

} // namespace

bool Entry::has_voter(uint32_t ip) const {
    for (uint8_t i = 0; i < voter_count; ++i)
        if (voters[i] == ip)
            return true;
    return false;
}

size_t place_bytes(const Place& p) { return kPlaceHeader + 4 * p.voters.size() + p.name.size(); }

bool encode(const Place& p, std::span<std::byte> out) {
    if (!name_fits(p.name) || !voters_fit(p.voters) || p.dim == 0 || p.dim > kMaxDim || out.size() < place_bytes(p))
        return false;
    std::byte* at = out.data();
    at[0] = std::byte(kPlaceVersion);
    at[1] = std::byte(p.voters.size());
    at[2] = std::byte(p.name.size());
    at[3] = std::byte(0);
    ktl::put_le<uint32_t>(at + 4, p.dim);
    at += kPlaceHeader;
    for (uint32_t v : p.voters) {
        ktl::put_le<uint32_t>(at, v);
        at += 4;
    }
    put_name(at, p.name);
    return true;
}

std::optional<Place> decode_place(std::span<const std::byte> in, uint32_t (&voters)[kMaxVoters]) {
    // (Version 1, in group 0's logs of kernels before placements named the dimension: dim 0.)
    const uint8_t version = in.empty() ? 0 : uint8_t(in[0]);
    const size_t header = version == kPlaceVersion ? kPlaceHeader : kPlaceHeaderV1;
    if ((version != kPlaceVersion && version != 1) || in.size() < header || uint8_t(in[3]) != 0)
        return std::nullopt;
    const size_t n = uint8_t(in[1]), name_length = uint8_t(in[2]);
    if (n > kMaxVoters || in.size() != header + 4 * n + name_length)
        return std::nullopt;
    for (size_t i = 0; i < n; ++i)
        voters[i] = ktl::get_le<uint32_t>(in.data() + header + 4 * i);
    const Place p { { reinterpret_cast<const char*>(in.data() + header + 4 * n), name_length },
                    { voters, n },
                    version == kPlaceVersion ? ktl::get_le<uint32_t>(in.data() + 4) : 0 };
    if (!name_fits(p.name) || !voters_fit(p.voters) || (version == kPlaceVersion && (p.dim == 0 || p.dim > kMaxDim)))
        return std::nullopt;
    return p;
}

size_t forget_bytes(const Forget& f) { return kForgetHeader + f.name.size(); }

bool encode(const Forget& f, std::span<std::byte> out) {
    if (!name_fits(f.name) || f.group < kFirstGroup || out.size() < forget_bytes(f))
        return false;
    std::memset(out.data(), 0, kForgetHeader);
    ktl::put_le<uint32_t>(out.data(), f.group);
    out[4] = std::byte(f.name.size());
    put_name(out.data() + kForgetHeader, f.name);
    return true;
}

std::optional<Forget> decode_forget(std::span<const std::byte> in) {
    if (in.size() < kForgetHeader || uint8_t(in[5]) != 0 || uint8_t(in[6]) != 0 || uint8_t(in[7]) != 0)
        return std::nullopt;
    const size_t name_length = uint8_t(in[4]);
    if (in.size() != kForgetHeader + name_length)
        return std::nullopt;
    const Forget f { ktl::get_le<uint32_t>(in.data()),
                     { reinterpret_cast<const char*>(in.data() + kForgetHeader), name_length } };
    if (!name_fits(f.name) || f.group < kFirstGroup)
        return std::nullopt;
    return f;
}

bool encode(const Reassign& r, std::span<std::byte> out) {
    if (out.size() < kReassignBytes || r.group < kFirstGroup || r.dead == 0 || r.with == 0 || r.dead == r.with)
        return false;
    ktl::put_le<uint32_t>(out.data(), r.group);
    ktl::put_le<uint32_t>(out.data() + 4, r.dead);
    ktl::put_le<uint32_t>(out.data() + 8, r.with);
    return true;
}

std::optional<Reassign> decode_reassign(std::span<const std::byte> in) {
    if (in.size() != kReassignBytes)
        return std::nullopt;
    const Reassign r { ktl::get_le<uint32_t>(in.data()), ktl::get_le<uint32_t>(in.data() + 4),
                       ktl::get_le<uint32_t>(in.data() + 8) };
    if (r.group < kFirstGroup || r.dead == 0 || r.with == 0 || r.dead == r.with)
        return std::nullopt;
    return r;
}

ktl::Result<const Entry*> Directory::place(const Place& p) {
    if (!name_fits(p.name) || !voters_fit(p.voters))
        return ktl::Error::InvalidArgs;
    if (find(p.name))
        return ktl::Error::Exists;
    if (m_count == kMaxEntries || m_next_group == UINT32_MAX)
        return ktl::Error::Full;
    for (uint32_t v : p.voters)
        if (groups_held(v) >= kMaxGroupsPerNode)
            return ktl::Error::Full;
    Entry& e = m_entries[m_count++];
    e = Entry {};
    e.group = m_next_group++; // never reused: a group id names a member's state on its disk
    e.dim = p.dim;
    e.voter_count = static_cast<uint8_t>(p.voters.size());
    for (size_t i = 0; i < p.voters.size(); ++i)
        e.voters[i] = p.voters[i];
    e.name_length = static_cast<uint8_t>(p.name.size());
    std::memcpy(e.name, p.name.data(), p.name.size());
    return &e;
}

ktl::Result<void> Directory::forget(const Forget& f) {
    for (size_t i = 0; i < m_count; ++i)
        if (m_entries[i].name_view() == f.name) {
            if (m_entries[i].group != f.group)
                return ktl::Error::NotFound;
            // (The order of the rest is kept: every copy stays the same, entry by entry.)
            for (size_t j = i + 1; j < m_count; ++j)
                m_entries[j - 1] = m_entries[j];
            m_entries[--m_count] = Entry {};
            return {};
        }
    return ktl::Error::NotFound;
}

ktl::Result<void> Directory::reassign(const Reassign& r) {
    Entry* e = nullptr;
    for (size_t i = 0; i < m_count; ++i)
        if (m_entries[i].group == r.group)
            e = &m_entries[i];
    if (!e || !e->has_voter(r.dead))
        return ktl::Error::NotFound;
    if (e->has_voter(r.with))
        return ktl::Error::Exists;
    if (groups_held(r.with) >= kMaxGroupsPerNode)
        return ktl::Error::Full;
    for (uint8_t i = 0; i < e->voter_count; ++i)
        if (e->voters[i] == r.dead)
            e->voters[i] = r.with;
    if (e->reassigned != UINT16_MAX)
        ++e->reassigned;
    return {};
}

const Entry* Directory::find(std::string_view name) const {
    for (size_t i = 0; i < m_count; ++i)
        if (m_entries[i].name_view() == name)
            return &m_entries[i];
    return nullptr;
}

const Entry* Directory::find_group(uint32_t group) const {
    for (size_t i = 0; i < m_count; ++i)
        if (m_entries[i].group == group)
            return &m_entries[i];
    return nullptr;
}

size_t Directory::groups_held(uint32_t ip) const {
    size_t n = 0;
    for (size_t i = 0; i < m_count; ++i)
        n += m_entries[i].has_voter(ip) ? 1 : 0;
    return n;
}

size_t Directory::groups_of(uint32_t ip, std::span<const Entry*> out) const {
    size_t n = 0;
    for (size_t i = 0; i < m_count && n < out.size(); ++i)
        if (m_entries[i].has_voter(ip))
            out[n++] = &m_entries[i];
    return n;
}

ktl::Result<void> Directory::choose(uint32_t self, std::span<const uint32_t> live, uint8_t n,
                                    std::span<uint32_t> out) const {
    if ((n != 3 && n != 5) || out.size() < n || self == 0)
        return ktl::Error::InvalidArgs;
    if (groups_held(self) >= kMaxGroupsPerNode)
        return ktl::Error::Full;
    out[0] = self;
    size_t chosen = 1;
    // n - 1 rounds of picking the best candidate not chosen yet: at most 4 x |live| comparisons.
    while (chosen < n) {
        uint32_t best = 0;
        size_t best_held = 0;
        for (uint32_t ip : live) {
            bool taken = ip == 0;
            for (size_t i = 0; i < chosen; ++i)
                taken = taken || out[i] == ip;
            const size_t held = taken ? kMaxGroupsPerNode : groups_held(ip);
            if (held >= kMaxGroupsPerNode)
                continue;
            if (best == 0 || held < best_held || (held == best_held && ip < best)) {
                best = ip;
                best_held = held;
            }
        }
        if (best == 0)
            return ktl::Error::Full;
        out[chosen++] = best;
    }
    return {};
}

size_t Directory::snapshot(std::span<std::byte> out) const {
    const size_t bytes = kSnapshotHeader + m_count * kSnapshotEntry;
    if (out.size() < bytes)
        return 0;
    std::memset(out.data(), 0, bytes);
    ktl::put_le<uint32_t>(out.data(), kMagic);
    ktl::put_le<uint16_t>(out.data() + 4, kSnapshotVersion);
    ktl::put_le<uint16_t>(out.data() + 6, static_cast<uint16_t>(m_count));
    ktl::put_le<uint32_t>(out.data() + 8, m_next_group);
    std::byte* at = out.data() + kSnapshotHeader;
    for (size_t i = 0; i < m_count; ++i, at += kSnapshotEntry) {
        const Entry& e = m_entries[i];
        ktl::put_le<uint32_t>(at, e.group);
        at[4] = std::byte(e.voter_count);
        at[5] = std::byte(e.name_length);
        ktl::put_le<uint16_t>(at + 6, e.reassigned);
        ktl::put_le<uint32_t>(at + 8, e.dim);
        for (size_t v = 0; v < kMaxVoters; ++v)
            ktl::put_le<uint32_t>(at + 12 + 4 * v, e.voters[v]);
        put_name(at + kSnapshotNameAt, e.name_view());
    }
    return bytes;
}

bool Directory::restore(std::span<const std::byte> in) {
    const uint16_t version = in.size() < kSnapshotHeader ? 0 : ktl::get_le<uint16_t>(in.data() + 4);
    if (in.size() < kSnapshotHeader || ktl::get_le<uint32_t>(in.data()) != kMagic ||
        (version != kSnapshotVersion && version != 1))
        return false;
    // (Version 1: a kernel's before entries carried the dimension; theirs is 0, unknown.)
    const size_t entry_bytes = version == kSnapshotVersion ? kSnapshotEntry : kSnapshotEntryV1;
    const size_t voters_at = version == kSnapshotVersion ? 12 : 8;
    const size_t count = ktl::get_le<uint16_t>(in.data() + 6);
    const uint32_t next_group = ktl::get_le<uint32_t>(in.data() + 8);
    if (count > kMaxEntries || in.size() != kSnapshotHeader + count * entry_bytes || next_group < kFirstGroup)
        return false;
    // Built aside and checked as the commands would have built it: a snapshot that could not have
    // come from them leaves this directory as it was.
    Directory d;
    d.m_next_group = next_group;
    const std::byte* at = in.data() + kSnapshotHeader;
    for (size_t i = 0; i < count; ++i, at += entry_bytes) {
        Entry e {};
        e.group = ktl::get_le<uint32_t>(at);
        e.voter_count = uint8_t(at[4]);
        e.name_length = uint8_t(at[5]);
        e.reassigned = ktl::get_le<uint16_t>(at + 6);
        e.dim = version == kSnapshotVersion ? ktl::get_le<uint32_t>(at + 8) : 0;
        if (e.voter_count > kMaxVoters || e.name_length > kMaxNameLength || e.group < kFirstGroup ||
            e.group >= next_group || e.dim > kMaxDim)
            return false;
        for (size_t v = 0; v < kMaxVoters; ++v)
            e.voters[v] = ktl::get_le<uint32_t>(at + voters_at + 4 * v);
        for (size_t v = e.voter_count; v < kMaxVoters; ++v)
            if (e.voters[v] != 0)
                return false;
        std::memcpy(e.name, at + voters_at + 4 * kMaxVoters, kMaxNameLength);
        for (size_t c = e.name_length; c < kMaxNameLength; ++c)
            if (e.name[c] != 0)
                return false;
        if (!name_fits(e.name_view()) || !voters_fit(e.voter_span()) || d.find(e.name_view()) || d.find_group(e.group))
            return false;
        for (uint32_t v : e.voter_span())
            if (d.groups_held(v) >= kMaxGroupsPerNode)
                return false;
        d.m_entries[d.m_count++] = e;
    }
    *this = d;
    return true;
}

size_t Directory::notice(uint64_t version, std::span<uint8_t> out) const {
    if (out.size() < kNoticeHeader)
        return 0;
    auto* b = reinterpret_cast<std::byte*>(out.data());
    const size_t n = snapshot({ b + kNoticeHeader, out.size() - kNoticeHeader });
    if (n == 0)
        return 0;
    ktl::put_le<uint64_t>(b, 0);
    ktl::put_le<uint64_t>(b + 8, version);
    ktl::put_le<uint16_t>(b + 16, kNotice);
    ktl::put_le<uint16_t>(b + 18, 0);
    ktl::put_le<uint32_t>(b + 20, static_cast<uint32_t>(n));
    return kNoticeHeader + n;
}

bool is_notice(std::span<const uint8_t> in) {
    return in.size() >= kNoticeHeader &&
           ktl::get_le<uint16_t>(reinterpret_cast<const std::byte*>(in.data()) + 16) == kNotice;
}

std::optional<uint64_t> take_notice(std::span<const uint8_t> in, Directory& out) {
    if (!is_notice(in) || in.size() > kMaxNotice)
        return std::nullopt;
    const auto* b = reinterpret_cast<const std::byte*>(in.data());
    if (ktl::get_le<uint64_t>(b) != 0 || ktl::get_le<uint16_t>(b + 18) != 0 ||
        ktl::get_le<uint32_t>(b + 20) != in.size() - kNoticeHeader)
        return std::nullopt;
    Directory d;
    if (!d.restore({ b + kNoticeHeader, in.size() - kNoticeHeader }))
        return std::nullopt;
    out = d;
    return ktl::get_le<uint64_t>(b + 8);
}

} // namespace raftdir

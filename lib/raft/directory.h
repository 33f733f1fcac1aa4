#pragma once
// The directory of replicated collections (issue 35; docs/replication.md, "A group per
// collection"): the state of the cluster's own consensus group (group 0) once each replicated
// collection has a Raft group of its own. For every such collection it names the group that holds
// it and that group's voters (IPv4 addresses, which are also their raft ids there). Every voter of
// group 0 applies the same commands in the same order, so every copy of the directory is the same:
// the group's id is assigned when a placement is applied, never by the node that proposed it (two
// nodes proposing at once would pick the same one), and a name is placed once.
//
// The node that creates a collection chooses its voters among the members it sees alive (itself
// first, then those holding the fewest groups, then by address); the directory refuses, when the
// command is applied, a node that would hold more groups than a node runs members for.
//
// Commands (group 0's log, the replication desk's command header before them; little-endian):
//   kPlace:    u8 version (2) | u8 voters n (3 or 5) | u8 name length | u8 0 | u32 dim | u32 voter[n] | name
//              (version 1, before dim: the same without it; such an entry's dim is 0, unknown)
//   kForget:   u32 group | u8 name length | u8 0 u8 0 u8 0 | name      (the collection dropped)
//   kReassign: u32 group | u32 dead voter | u32 its replacement        (a voter replaced)
// A snapshot of the directory (group 0's snapshots carry it):
//   u32 magic "RDIR" | u16 version (2) | u16 entries | u32 next group | entries, each
//   u32 group | u8 voters | u8 name length | u16 reassigned | u32 dim | u32 voter[5] | name (64 bytes,
//   zero-padded)   (version 1: entries without dim)
// The dimension lets a node that holds no copy take a change of the collection for its voters
// (docs/replication.md, "Changes from outside a group").
// A notice (group 0's leader to the nodes outside group 0, on its forwarding channel: they apply
// none of its log, and learn the directory so; docs/replication.md "The directory at every node"):
//   u64 0 | u64 version (the leader's applied index when it took it) | u16 kNotice | u16 0 |
//   u32 length | a snapshot of the directory
// Everything decoded is checked: lengths, counts, names (1..64 bytes, as the store's records
// bound them; the store checks its naming rule before a placement is proposed), voters distinct
// and non-zero; what does not add up is refused whole.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace raftdir {

constexpr size_t kMaxEntries = 32;      // the store's collections (abi::kMaxNamed)
constexpr size_t kMaxNameLength = 64;   // abi::kMaxNameLength
constexpr size_t kMaxVoters = 5;        // a collection's group: 3 or 5
constexpr size_t kMaxGroupsPerNode = 7; // members a node runs besides group 0's (raftlog's 8 images)
constexpr uint32_t kFirstGroup = 1;     // group 0 is the directory's own
constexpr uint32_t kMaxDim = 4096;      // a placement's dimension (the store's bound)

// Record types of group 0's commands (beside the store's records and the read barrier).
enum Type : uint16_t { kPlace = 0x201, kForget = 0x202, kReassign = 0x203, kNotice = 0x204 };

struct Entry {
    uint32_t group = 0;
    uint8_t voter_count = 0;
    uint8_t name_length = 0;
    // Voters replaced so far: 0 while the voters are the ones that bootstrapped the group (a voter
    // named later joins the running group instead: two bootstraps of one group would differ).
    uint16_t reassigned = 0;
    uint32_t dim = 0; // the collection's vectors' (0: placed by a kernel before placements said)
    uint32_t voters[kMaxVoters] = {};
    char name[kMaxNameLength] = {};

    std::string_view name_view() const { return { name, name_length }; }
    std::span<const uint32_t> voter_span() const { return { voters, voter_count }; }
    bool has_voter(uint32_t ip) const;
};

struct Place {
    std::string_view name;
    std::span<const uint32_t> voters;
    uint32_t dim = 0; // 1..kMaxDim (0 only in a version 1 record)
};
struct Forget {
    uint32_t group;
    std::string_view name;
};
struct Reassign {
    uint32_t group, dead, with;
};

// Bytes of each command's record, and their encoders (false: `out` too small, or the command
// itself does not add up: a bad name, a voter count other than 3 or 5, a voter twice or zero, no dim).
constexpr size_t kPlaceHeader = 8;
size_t place_bytes(const Place& p);
bool encode(const Place& p, std::span<std::byte> out);
constexpr size_t kForgetHeader = 8;
size_t forget_bytes(const Forget& f);
bool encode(const Forget& f, std::span<std::byte> out);
constexpr size_t kReassignBytes = 12;
bool encode(const Reassign& r, std::span<std::byte> out);

// Decoders: what `in` says, or nothing when it does not add up (the views point into `in`).
std::optional<Place> decode_place(std::span<const std::byte> in, uint32_t (&voters)[kMaxVoters]);
std::optional<Forget> decode_forget(std::span<const std::byte> in);
std::optional<Reassign> decode_reassign(std::span<const std::byte> in);

constexpr size_t kSnapshotHeader = 12;
constexpr size_t kSnapshotEntry = 12 + 4 * kMaxVoters + kMaxNameLength;
constexpr size_t kSnapshotNameAt = 12 + 4 * kMaxVoters; // an entry's name, from the entry's start
constexpr size_t kMaxSnapshot = kSnapshotHeader + kMaxEntries * kSnapshotEntry;
constexpr size_t kNoticeHeader = 24;
constexpr size_t kMaxNotice = kNoticeHeader + kMaxSnapshot;

class Directory {
public:
    // The commands, as every voter of group 0 applies them. place(): the new entry (its group
    // assigned here), or Exists (the name is placed: the earlier placement stands), Full (32
    // entries, or a voter that already holds kMaxGroupsPerNode groups), InvalidArgs.
    ktl::Result<const Entry*> place(const Place& p);
    // NotFound: no such name, or it is held by another group (a forget that came late).
    ktl::Result<void> forget(const Forget& f);
    // NotFound: no such group, or `dead` is none of its voters; Exists: `with` already is one;
    // Full: `with` holds kMaxGroupsPerNode groups.
    ktl::Result<void> reassign(const Reassign& r);

    const Entry* find(std::string_view name) const;
    const Entry* find_group(uint32_t group) const;
    // How many groups `ip` is a voter of.
    size_t groups_held(uint32_t ip) const;
    // The entries `ip` is a voter of (its members to run), at most out.size(); their number.
    size_t groups_of(uint32_t ip, std::span<const Entry*> out) const;
    std::span<const Entry> entries() const { return { m_entries, m_count }; }
    uint32_t next_group() const { return m_next_group; }

    // The voters of a new collection of `n` replicas created at `self`: itself first, then the
    // `live` members (self and duplicates ignored) holding the fewest groups, the lower address
    // first on a tie; a node that holds kMaxGroupsPerNode groups is passed over. Writes n voters
    // to `out`; InvalidArgs (n not 3 or 5, out too small), Full (fewer than n nodes can take it,
    // self included: self must).
    ktl::Result<void> choose(uint32_t self, std::span<const uint32_t> live, uint8_t n, std::span<uint32_t> out) const;

    // The whole directory as a snapshot (kMaxSnapshot bytes at most): its length, 0 if `out` is
    // too small.
    size_t snapshot(std::span<std::byte> out) const;
    // Replaces this directory with a snapshot's; false (this one unchanged) when it does not add up.
    bool restore(std::span<const std::byte> in);

    // A notice of this directory as of `version` into out: its length, 0 if `out` is too small.
    size_t notice(uint64_t version, std::span<uint8_t> out) const;

private:
    Entry m_entries[kMaxEntries] {};
    size_t m_count = 0;
    uint32_t m_next_group = kFirstGroup;
};

// Whether `in` is a notice by its type; the version and directory it carries (a directory that
// does not add up, or a header that does not: nothing, `out` unchanged).
bool is_notice(std::span<const uint8_t> in);
std::optional<uint64_t> take_notice(std::span<const uint8_t> in, Directory& out);

} // namespace raftdir

#pragma once
// What a Raft member keeps durable (issue 35; docs/replication.md): its term and vote, and its
// log, as records of the kernel's write-ahead log beside the vector store's. The member's raft_io
// writes one record per request the engine makes (set_term/set_vote, append, truncate), in the
// order it makes them; a crash keeps a prefix of them (the log's commits are whole or absent), and
// replaying that prefix in order gives back exactly the state those requests had made durable.
// A checkpoint carries a group's state as the same records (a Term record, then one Append from
// the log's start), so recovery has one way to read both.
//
// Payloads, little-endian (the journal's record header carries the kind and the length):
//   Term     (24 bytes): u64 group | u64 term | u64 vote (0: none)
//   Append             : u64 group | u64 index of the first entry | u32 count | u32 0 |
//                        count x ( u64 term | u8 type | 3 zero bytes | u32 length | bytes,
//                        zero-padded to 8 )
//   Truncate (16 bytes): u64 group | u64 index (that entry and every later one are gone; at or
//                        before the log's start: the whole log)
//   Snapshot           : u64 group | u64 index | u64 term (of the last entry it covers) |
//                        u64 configuration index | u32 trailing | u32 configuration length |
//                        u32 data length | u32 0 | configuration, zero-padded to 8 | data, the same
//                        (trailing 0: an installed snapshot, which replaces the whole log; otherwise
//                        the log keeps the `trailing` entries up to the snapshot's index and after)
//   Forget    (8 bytes): u64 group (the node left the group for good: its state goes; a group's id
//                        is never used again, so nothing of it can come back)
// Decoding distrusts the bytes, whatever the log's checksums said: a record that does not add up
// is refused, never followed out of bounds. Replay also refuses a sequence that cannot come from
// a correct member (a term going back, a gap in the log, a truncation before its start), so a bug
// shows as a refused record, not as a log that silently differs.
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>

namespace raftlog {

enum class Kind : uint8_t { Term = 1, Append = 2, Truncate = 3, Snapshot = 4, Forget = 5 };
constexpr uint8_t kMaxKind = 5;

constexpr size_t kTermBytes = 24;
constexpr size_t kTruncateBytes = 16;
constexpr size_t kForgetBytes = 8;
constexpr size_t kAppendFixed = 24;
constexpr size_t kEntryFixed = 16;
constexpr uint32_t kMaxEntries = 1u << 16; // per record
constexpr uint32_t kMaxEntryBytes = 1u << 20;
constexpr size_t kSnapshotFixed = 48;
constexpr uint32_t kMaxSnapshotConf = 64 * 1024;
constexpr uint32_t kMaxSnapshotData = 16u << 20;

// A snapshot as the engine hands it over: the last entry it covers (index, term), the index of
// the configuration it carries, the configuration (the engine's encoding) and the state's bytes.
struct SnapshotView {
    uint64_t index, term, conf_index;
    std::span<const std::byte> conf, data;
};
// Bytes a Snapshot record takes (0: a configuration or data over their bounds).
size_t snapshot_bytes(size_t conf, size_t data);
constexpr uint8_t kMinEntryType = 1; // the engine's RAFT_COMMAND, RAFT_BARRIER, RAFT_CHANGE
constexpr uint8_t kMaxEntryType = 3;

struct EntryView {
    uint64_t term;
    uint8_t type;
    std::span<const std::byte> data;
};

// Bytes an Append of these entries takes (0: more than kMaxEntries, an entry over kMaxEntryBytes).
size_t append_bytes(std::span<const EntryView> entries);

// Each writes one payload into `out` and returns its length; InvalidArgs for values no member
// writes (term 0, index 0, an empty Append, an unknown entry type), OutOfRange when out is small.
ktl::Result<size_t> encode_term(std::span<std::byte> out, uint64_t group, uint64_t term, uint64_t vote);
ktl::Result<size_t> encode_append(std::span<std::byte> out, uint64_t group, uint64_t first_index,
                                  std::span<const EntryView> entries);
ktl::Result<size_t> encode_truncate(std::span<std::byte> out, uint64_t group, uint64_t index);
ktl::Result<size_t> encode_forget(std::span<std::byte> out, uint64_t group);
ktl::Result<size_t> encode_snapshot(std::span<std::byte> out, uint64_t group, const SnapshotView& s, uint32_t trailing);

struct Decoded {
    Kind kind;
    uint64_t group;
    uint64_t term, vote;                // Term
    uint64_t index;                     // Append (its first entry), Truncate
    uint32_t count;                     // Append
    std::span<const std::byte> entries; // Append: the entries' bytes, every one checked
    SnapshotView snapshot;              // Snapshot
    uint32_t trailing;                  // Snapshot
};

// Corrupt for anything malformed.
ktl::Result<Decoded> decode(Kind kind, std::span<const std::byte> payload);

// An Append's entries, in order (decode() checked that they add up).
class EntryReader {
public:
    explicit EntryReader(const Decoded& d) : m_rest(d.entries), m_left(d.count) {}
    bool next(EntryView& e);

private:
    std::span<const std::byte> m_rest;
    uint32_t m_left;
};

// What replay rebuilds: one member's durable state, kept by the caller (the kernel's member, a
// test's model). Its log holds entries [start, next_index).
class Target {
public:
    virtual uint64_t term() const = 0;
    virtual uint64_t start() const = 0;
    virtual uint64_t next_index() const = 0;
    virtual bool set_term(uint64_t term, uint64_t vote) = 0;
    virtual bool append(const EntryView& e) = 0; // at next_index()
    virtual bool truncate(uint64_t index) = 0;   // entries from index on removed (start <= index)
    virtual uint64_t snapshot_index() const = 0; // 0: none
    // Keeps `s` as the snapshot and `start` as the log's first index: entries before it are
    // dropped; a start past the log's end leaves it empty, starting there.
    virtual bool set_snapshot(const SnapshotView& s, uint64_t start) = 0;

protected:
    ~Target() = default;
};

// Applies one decoded record of `t`'s group: Corrupt when the sequence cannot come from a correct
// member (a term lower than the one held; an Append that does not start exactly at the log's end:
// the engine truncates before it writes over entries; a Truncate past the log's end; a snapshot
// older than the one held), NoMemory when the target could not keep an entry or a snapshot.
// (A Forget is the holder's of every group's state to follow: Images drops the group's image; to
// one group's target it is Corrupt, as no member's own state carries one.)
ktl::Error replay(const Decoded& d, Target& t);

} // namespace raftlog

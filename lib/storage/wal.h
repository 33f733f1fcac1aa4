#pragma once
// A write-ahead log of records over a region of a block device (issue 19, its first part: the
// record format, group commit and recovery; checkpoints and the superblock come next).
//
// Record: a 32-byte header, then the payload, padded to 8 bytes.
//    0 u32 magic "BWAL"   4 u32 epoch (the log's generation)   8 u64 sequence number (from 1)
//   16 u32 payload length 20 u16 type   22 u16 flags (1: first record of a commit, 2: last)
//   24 u32 CRC-32C of bytes [0, 24) and the payload
//   28 u32 chain: CRC-32C of the previous record's chain and this record's CRC (the first record
//      of an epoch chains from the epoch itself)
// A commit is one or more records written together, starting at a sector boundary and padded with
// zeros to the next one, so a later commit never rewrites a sector holding acknowledged records
// (a torn write of that sector cannot take them with it), and followed in the same write by a zero
// sector, so that the log always ends cleanly, also over what an older epoch left (a checkpoint
// starts the log over). commit() returns once the device has flushed: what it acknowledged
// survives a power cut.
// Recovery accepts whole commits only, each record's CRC and chain checked and sequence numbers
// consecutive; the chain keeps what a torn, unacknowledged commit left on the disk from ever
// passing for the continuation of a later one. The first commit that fails ends the log, and so
// does a sector that looks like an end (a zero first word, or a header of another epoch). Wherever
// the walk stops, the sectors after it are searched: if a whole commit that starts later on
// (within kDamageScanCommits commits' reach) is intact (its own first record checks out with a
// higher sequence number), what stopped the walk was damage in the middle, not an end: that is
// reported, and nothing after it is replayed silently (one flipped bit in an epoch or a zeroed
// first word must not cut acknowledged commits off). A header of a *newer* epoch than the log was
// opened with is never an end either: the superblock that named this epoch is behind the disk.
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>

#include "block_device.h"

namespace storage {

struct LogRecord {
    uint64_t seq;
    uint16_t type;
    std::span<const std::byte> payload;
};

struct Recovery {
    uint64_t commits = 0;
    uint64_t records = 0;
    uint64_t next_seq = 1;
    uint64_t tail_lba = 0;    // where the next commit goes (absolute)
    bool torn_tail = false;   // an unacknowledged commit was cut short and dropped
    bool stale_end = false;   // the log ends where an older epoch's records begin (a checkpoint's cut)
    bool damaged = false;     // a commit in the middle failed its checks while later ones are intact
    uint64_t damaged_seq = 0; // the first sequence number not replayed
    bool newer_epoch = false; // the walk met a header of a later epoch: the superblock is out of date
    uint32_t found_epoch = 0; // ... that epoch
};

class Wal {
public:
    static constexpr uint32_t kMagic = 0x4C415742; // "BWAL"
    static constexpr size_t kHeader = 32;
    static constexpr uint16_t kFirst = 1, kLast = 2;
    // How many commits' worth of sectors past a failed commit recovery searches for an intact one
    // (damage in the middle) before calling the failure a torn tail.
    static constexpr uint64_t kDamageScanCommits = 4;

    // The log lives in sectors [first, first + count). `buffer` holds one commit and its end marker
    // (a multiple of the sector size): it bounds a commit, and recovery reads each commit into it.
    Wal(BlockDevice& device, uint64_t first, uint64_t count, uint32_t epoch, std::span<std::byte> buffer);

    // Replays every whole commit in order, calling visit(const LogRecord&) for each of its records
    // once the whole commit has checked out, and positions the log after the last one.
    template <typename Visit>
    ktl::Result<Recovery> recover(Visit&& visit) {
        return recover_impl([](void* ctx, const LogRecord& r) { (*static_cast<Visit*>(ctx))(r); }, &visit, nullptr);
    }
    // The same walk again, over a log `known` describes (what recover() found, nothing written
    // since): every record is visited again, and `known` comes back once the walk has reached its
    // end, without searching the sectors after it for damage a second time. Should the walk stop
    // short of it (the disk changed under it), it ends as recover() would.
    template <typename Visit>
    ktl::Result<Recovery> recover_again(const Recovery& known, Visit&& visit) {
        return recover_impl([](void* ctx, const LogRecord& r) { (*static_cast<Visit*>(ctx))(r); }, &visit, &known);
    }

    // Adds a record to the commit being built; its sequence number. TooLarge-like errors:
    // OutOfRange when it cannot fit one commit at all, Full when this commit has no room left
    // (commit() first).
    ktl::Result<uint64_t> append(uint16_t type, std::span<const std::byte> payload);
    // Writes the commit being built and flushes: acknowledged once it returns. Full: the region has
    // no room for it (nothing written; the records stay pending). Unsupported: the device cannot
    // flush (written, but durability unknown: the caller reports it).
    ktl::Result<void> commit();
    // Starts the log over, empty, in a new epoch (after a checkpoint took in everything before):
    // what the old epoch left on the disk is never read as part of the new one.
    void reset(uint32_t epoch);
    uint32_t epoch() const { return m_epoch; }
    uint64_t next_seq() const { return m_next_seq; }
    uint64_t used_sectors() const { return m_tail - m_first; }
    size_t pending_bytes() const { return m_used; }
    uint64_t free_sectors() const { return m_first + m_count - m_tail; }

private:
    using VisitFn = void (*)(void* ctx, const LogRecord& r);
    ktl::Result<Recovery> recover_impl(VisitFn visit, void* ctx, const Recovery* known);
    // Loads sectors from `lba` into the buffer until at least `bytes` are there (false: past the
    // region or the buffer).
    ktl::Result<bool> load(uint64_t lba, size_t bytes, size_t& loaded);
    bool intact_commit_after(uint64_t lba, uint64_t seq);
    // Whether the record whose header starts sector `lba` passes its own CRC (whatever its epoch).
    ktl::Result<bool> first_record_intact(uint64_t lba);

    BlockDevice& m_dev;
    uint64_t m_first, m_count;
    uint32_t m_epoch;
    std::span<std::byte> m_buf;
    uint32_t m_sector;
    uint64_t m_tail; // next commit's sector
    uint64_t m_next_seq = 1;
    uint32_t m_chain;         // the last record's chain
    size_t m_used = 0;        // bytes of the commit being built
    size_t m_last_header = 0; // offset of its last record's header (its flags are set at commit)
    uint64_t m_pending = 0;   // records of the commit being built
};

} // namespace storage

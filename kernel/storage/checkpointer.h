#pragma once
// Checkpoints, written and read by the storage task (storage/checkpoint.h has the format).
//
// Writing one: the journal's barrier holds logged writes back; once every write that got room is
// in the log (memory equals the log), each durable collection is exported page by page (the
// vector store's snapshot format) into the checkpoint area the current checkpoint is not in, then
// the Raft groups' state (the records that rebuild it), the audit trail's records; the header goes last, then the
// superblock names the new checkpoint and a new log epoch, and the log starts over. A power cut anywhere before the
// superblock write leaves the previous checkpoint and log as they were.
//
// Disk layout: [0, kLogFirst) superblock; the log; then two checkpoint areas of equal size, halves
// of what the disk has past the log now; a checkpoint never goes over the current one's extent
// (storage/layout.h: a grown image moves them).
#include <cstdint>

#include <ktl/result.h>
#include <storage/checkpoint.h>
#include <storage/superblock.h>
#include <storage/wal.h>

#include "disk_client.h"

namespace storaged {

// The log a fresh disk of `sectors` gets: a quarter of it, 2 MiB .. 1 GiB.
uint64_t log_sectors_for(uint64_t sectors);

struct CheckpointResult {
    int status;     // 0 written, 1 no room for it (the log stays), < 0 -error
    uint64_t bytes; // how large it was
    uint32_t pieces;
    uint64_t ms; // how long writes were held back
};

class Checkpointer {
public:
    Checkpointer(DiskClient& disk, uint32_t disk_cap, uint32_t store_cap, uint32_t audit_cap, uint32_t raft_cap)
        : m_disk(disk), m_disk_cap(disk_cap), m_store(store_cap), m_audit(audit_cap), m_raft(raft_cap) {}

    // Takes a checkpoint now; `drain` writes what the journal staged meanwhile (one group, or
    // nothing within a few milliseconds). On success `sb` and `wal` are the new superblock and the
    // log of the new epoch.
    using Drain = ktl::Result<void> (*)(storage::Wal& wal);
    CheckpointResult take(storage::Superblock& sb, storage::Wal& wal, Drain drain);

    // Puts the checkpoint `sb` names back into the store (collections through store_stage, the
    // audit trail's records into its region, the Raft groups' stream through raft_restore).
    // Corrupt: a header or piece fails its CRC.
    struct Loaded {
        uint32_t collections;
        uint64_t audit_records;
        uint64_t bytes;
        uint64_t raft_bytes; // the Raft groups' stream given back
    };
    // `kind`: the pieces of that kind only (recovery puts the audit trail back first, so the
    // bridges can serve while the collections load).
    ktl::Result<Loaded> load(const storage::Superblock& sb, storage::PieceKind kind);

    // With one superblock copy damaged, `sb` (the other) may be one checkpoint behind: the copy
    // that was lost named the checkpoint written after it, in the area the next one goes to. If
    // that area holds a whole header of the next epoch, `sb` is made to name it (true). Taking it
    // is right even when the lost copy was a torn write of that very checkpoint's superblock: the
    // checkpoint was complete (its header is written last), and holds everything acknowledged.
    bool adopt_newer(storage::Superblock& sb);

private:
    ktl::Result<void> write_piece_bytes(uint64_t first_sector, uint64_t offset, const std::byte* data, size_t len);
    ktl::Result<void> write_chunk(uint64_t first_sector, uint64_t offset, uint64_t bytes);
    template <typename Fill>
    bool write_piece(uint64_t first_sector, storage::CheckpointEntry& e, Fill&& fill);

    DiskClient& m_disk;
    uint32_t m_disk_cap, m_store, m_audit, m_raft;
};

} // namespace storaged

#pragma once
// Records of the storage calls (disk_info, storage_info, journal_checkpoint).
#include <cstdint>

namespace abi {

// Layout returned by disk_info.
struct DiskInfo {
    uint64_t bytes;
    uint32_t block_size; // the device's preferred unit
    uint32_t flags;      // kDiskCanFlush, kDiskReadOnly
    uint64_t reads, writes, flushes, errors, irqs, rejected;
    uint64_t bytes_read, bytes_written;
    uint32_t max_transfer; // bytes per disk_read / disk_write
    uint32_t in_flight;
};
constexpr uint32_t kDiskCanFlush = 1;
constexpr uint32_t kDiskReadOnly = 2;
constexpr uint32_t kDiskSector = 512; // the unit of disk_read and disk_write addresses and lengths

// The storage layer's state (StorageInfo::state; the journal's own, kernel/storage/journal.h).
enum class StorageState : uint8_t { Off, Recovering, Ready, Failed };

constexpr const char* storage_state_name(StorageState s) {
    switch (s) {
    case StorageState::Off: return "off";
    case StorageState::Recovering: return "recovering";
    case StorageState::Ready: return "ready";
    case StorageState::Failed: return "failed";
    }
    return "unknown";
}

// Layout returned by storage_info: what kernel://status reports under `storage`.
struct StorageInfo {
    uint8_t state; // StorageState
    uint8_t has_disk;
    uint8_t can_flush;
    uint8_t damaged; // recovery found damage in the middle of the log
    uint32_t block_size;
    uint64_t disk_bytes;
    uint64_t log_bytes; // the log region
    uint64_t log_free;  // bytes the log has left
    uint64_t commits, records, bytes, waiters_max, refused_full, last_commit_ns;
    uint64_t recovered_records, recovered_commits, recovery_ms;
    uint64_t reads, writes, flushes, errors;
    uint64_t bytes_read, bytes_written, commit_ns_total;
    uint32_t staged_bytes, pending_acks;
    uint64_t audit_staged, audit_lost, recovered_audit;
    uint64_t checkpoints, checkpoint_ms, checkpoint_bytes; // this boot's; the last one's time and size
    uint64_t recovered_checkpoint_bytes;                   // the checkpoint recovery started from
    uint64_t recovery_progress;                            // store changes replayed so far
    uint8_t torn_tail;                                     // recovery dropped an unacknowledged, half-written group
    uint8_t formatted;                                     // this boot wrote a fresh superblock
    uint8_t superblock_copy_damaged; // one of the two copies failed its checks (the other was used)
    uint8_t newer_checkpoint;        // ... and the checkpoint the lost copy named was found and used
    uint8_t reserved[4];
    char reason[128]; // why off or failed
};

// journal_checkpoint's steps (kernel/storage/journal.h takes them).
enum class CheckpointStep : uint8_t {
    Query = 0,    // 1 when one was asked for (an import, a full log)
    Begin = 1,    // the barrier: logged writes wait from now on
    Quiesced = 2, // 1 once every write that got room has been written to the log
    Cut = 3,      // memory equals the log: imports noted so far are in this checkpoint
    Hold = 4,     // the trail's new records wait for the new log; returns the region's record count
    Done = 5,     // status 0: written (log_free: the new log's room); 1: no room for it; < 0: failed
};

} // namespace abi

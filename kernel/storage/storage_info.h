#pragma once
// Layout returned by storage_info: what kernel://status reports under `storage`.
#include <cstdint>

namespace storage_info {

struct StorageInfo {
    uint8_t state;        // journal::State
    uint8_t has_disk;
    uint8_t can_flush;
    uint8_t damaged;      // recovery found damage in the middle of the log
    uint32_t block_size;
    uint64_t disk_bytes;
    uint64_t log_bytes;   // the log region
    uint64_t log_free;    // bytes the log has left
    uint64_t commits, records, bytes, waiters_max, refused_full, last_commit_ns;
    uint64_t recovered_records, recovered_commits, recovery_ms;
    uint64_t reads, writes, flushes, errors;
    uint64_t bytes_read, bytes_written, commit_ns_total;
    uint32_t staged_bytes, pending_acks;
    uint64_t audit_staged, audit_lost, recovered_audit;
    uint64_t checkpoints, checkpoint_ms, checkpoint_bytes; // this boot's; the last one's time and size
    uint64_t recovered_checkpoint_bytes;                   // the checkpoint recovery started from
    uint64_t recovery_progress;                            // store changes replayed so far
    uint8_t torn_tail;    // recovery dropped an unacknowledged, half-written group
    uint8_t formatted;    // this boot wrote a fresh superblock
    uint8_t superblock_copy_damaged; // one of the two copies failed its checks (the other was used)
    uint8_t newer_checkpoint;        // ... and the checkpoint the lost copy named was found and used
    uint8_t reserved[4];
    char reason[128];     // why off or failed
};

// What the storage task learnt at recovery (set once, read by storage_info).
struct Recovered {
    uint64_t log_bytes, records, commits, ms;
    uint64_t audit_records; // audit trail records put back into the trail's region
    uint64_t checkpoint_bytes;      // the checkpoint recovery loaded (0: none)
    uint64_t last_checkpoint_ms, last_checkpoint_bytes; // written by the storage task after each one
    uint64_t progress_records;      // store changes replayed so far
    bool damaged, torn_tail, formatted, copy_damaged, newer_checkpoint;
};
void set_recovered(const Recovered& r);
void note_checkpoint(uint64_t ms, uint64_t bytes);
void note_progress(uint64_t records); // store changes replayed so far (while recovering)
const Recovered& recovered();

} // namespace storage_info

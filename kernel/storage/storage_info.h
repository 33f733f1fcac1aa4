#pragma once
// Layout returned by storage_info: what kernel://status reports under `storage`.
#include <cstdint>

#include <abi/storage.h>

namespace storage_info {

using abi::StorageInfo; // layout shared with tasks (abi/storage.h)

// What the storage task learnt at recovery (set once, read by storage_info).
struct Recovered {
    uint64_t log_bytes, records, commits, ms;
    uint64_t audit_records;                             // audit trail records put back into the trail's region
    uint64_t checkpoint_bytes;                          // the checkpoint recovery loaded (0: none)
    uint64_t last_checkpoint_ms, last_checkpoint_bytes; // written by the storage task after each one
    uint64_t progress_records;                          // store changes replayed so far
    bool damaged, torn_tail, formatted, copy_damaged, newer_checkpoint;
};
void set_recovered(const Recovered& r);
void note_checkpoint(uint64_t ms, uint64_t bytes);
void note_progress(uint64_t records); // store changes replayed so far (while recovering)
const Recovered& recovered();

} // namespace storage_info

#pragma once
// The storage task: the only holder of the disk. At boot it reads the superblock (formatting an
// empty disk), replays the write-ahead log into the vector store through the same system calls a
// tool uses, then opens the journal and writes each staged group to the log with one flush.
//
// Disk layout (512-byte sectors): 0 and 1 the superblock's two copies; from kLogFirst the log (a
// quarter of the disk, 2 MiB .. 1 GiB); the rest two checkpoint areas (checkpointer.h). A
// checkpoint is taken when the log holds a 32nd of what the last one held (128 KiB .. kTailBytes,
// half the log at most; `checkpoint_kib=` sets it), when an import asks for one, and when a write
// finds the log full: the log a recovery replays is then at most kTailBytes and one staged group
// (the journal's staging buffer) more, unless a checkpoint found no room.
#include <cstdint>

namespace storaged {

constexpr uint64_t kLogFirst = 2048;           // 1 MiB in: room for the superblock and what comes later
constexpr uint64_t kMinDiskBytes = 8ull << 20; // the superblock, a 2 MiB log, two checkpoint areas
// What the log may hold before a checkpoint: recovery replays it vector by vector, which bounds
// the time a boot with data takes (docs/storage.md has the figures).
constexpr uint64_t kTailBytes = 512 * 1024;
constexpr uint64_t kIoTimeoutNs = 30'000'000'000ull; // a disk that does not answer in 30 s has failed

struct Caps {
    uint32_t disk = ~0u;  // Disk: read, write
    uint32_t store = ~0u; // VectorStore: create, drop, grant (replay)
    uint32_t audit = ~0u; // the MCP audit trail's region: read (checkpoints), write (recovery puts records back)
    uint32_t raft = ~0u;  // RaftLog: write (recovery gives the groups' state back), read (checkpoints)
};

int64_t task_main(void* caps);

} // namespace storaged

#pragma once
// The storage task: the only holder of the disk. At boot it reads the superblock (formatting an
// empty disk), replays the write-ahead log into the vector store through the same system calls a
// tool uses, then opens the journal and writes each staged group to the log with one flush.
//
// Disk layout (512-byte sectors): 0 and 1 the superblock's two copies; [kLogFirst, end) the log.
#include <cstdint>

namespace storaged {

constexpr uint64_t kLogFirst = 2048;         // 1 MiB in: room for the superblock and what comes later
constexpr uint64_t kMinDiskBytes = 4ull << 20;
constexpr uint64_t kIoTimeoutNs = 30'000'000'000ull; // a disk that does not answer in 30 s has failed

struct Caps {
    uint32_t disk = ~0u;  // Disk: read, write
    uint32_t store = ~0u; // VectorStore: create, drop, grant (replay)
    uint32_t audit = ~0u; // the MCP audit trail's region: write (replay puts the logged records back)
};

int64_t task_main(void* caps);

} // namespace storaged

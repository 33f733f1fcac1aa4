#pragma once
// The superblock of a Basalt disk, kept twice (sectors 0 and 1) so that one torn write can never
// lose both: each update writes the copy the previous one did not, with the generation one
// higher, and flushes. Reading takes the valid copy with the highest generation; a damaged copy is
// reported, not hidden.
//
// Layout (little-endian): magic "BSLTSUPR", u32 version (1), u32 sector size, u64 generation,
// u32 log epoch, u32 0, u64 log first sector, u64 log sector count, u64 checkpoint first sector,
// u64 checkpoint bytes, u32 checkpoint CRC-32C, u32 CRC-32C of everything before it.
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>

#include "block_device.h"

namespace storage {

struct Superblock {
    uint64_t generation = 0;
    uint32_t epoch = 0; // the log's epoch: a checkpoint starts a new one
    uint64_t log_first = 0;
    uint64_t log_count = 0;
    uint64_t checkpoint_first = 0; // 0: no checkpoint yet
    uint64_t checkpoint_bytes = 0;
    uint32_t checkpoint_crc = 0;
};

struct SuperblockRead {
    Superblock sb;
    bool copy_damaged = false; // one copy failed its checks (the other was used)
};

// NotFound: a fresh disk (both copies never written); Corrupt: neither copy is valid (a disk of
// something else, or both damaged); Unsupported: a sector size or version this build does not read.
// `scratch` holds one sector.
ktl::Result<SuperblockRead> read_superblock(BlockDevice& dev, std::span<std::byte> scratch);
// Writes `sb` with the next generation into the copy the current one is not in, then flushes; the
// generation written. `scratch` holds one sector.
ktl::Result<uint64_t> write_superblock(BlockDevice& dev, const Superblock& current, Superblock next,
                                       std::span<std::byte> scratch);

} // namespace storage

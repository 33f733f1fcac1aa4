#include "superblock.h"
#include "crc32c.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace storage {
namespace {

constexpr uint8_t kMagic[8] = { 'B', 'S', 'L', 'T', 'S', 'U', 'P', 'R' };
constexpr uint32_t kVersion = 1;
constexpr size_t kBytes = 68; // the CRC's offset

// Field offsets (the layout in superblock.h).
enum Offset : size_t {
    kVersionAt = 8,
    kSectorAt = 12,
    kGenerationAt = 16,
    kEpochAt = 24,
    kZeroAt = 28,
    kLogFirstAt = 32,
    kLogCountAt = 40,
    kCheckpointFirstAt = 48,
    kCheckpointBytesAt = 56,
    kCheckpointCrcAt = 64,
    kCrcAt = kBytes,
};
using ktl::get_le;
using ktl::put_le;

enum class Copy { Valid, Blank, Bad };

Copy parse(std::span<const std::byte> s, uint32_t sector, Superblock& out) {
    bool blank = true;
    for (std::byte b : s)
        blank = blank && b == std::byte { 0 };
    if (blank)
        return Copy::Blank;
    if (std::memcmp(s.data(), kMagic, 8) != 0)
        return Copy::Bad;
    const std::byte* p = s.data();
    const uint32_t version = get_le<uint32_t>(p + kVersionAt), size = get_le<uint32_t>(p + kSectorAt);
    out.generation = get_le<uint64_t>(p + kGenerationAt);
    out.epoch = get_le<uint32_t>(p + kEpochAt);
    const uint32_t zero = get_le<uint32_t>(p + kZeroAt);
    out.log_first = get_le<uint64_t>(p + kLogFirstAt);
    out.log_count = get_le<uint64_t>(p + kLogCountAt);
    out.checkpoint_first = get_le<uint64_t>(p + kCheckpointFirstAt);
    out.checkpoint_bytes = get_le<uint64_t>(p + kCheckpointBytesAt);
    out.checkpoint_crc = get_le<uint32_t>(p + kCheckpointCrcAt);
    const uint32_t crc = get_le<uint32_t>(p + kCrcAt);
    if (crc != crc32c(0, s.data(), kBytes) || version != kVersion || size != sector || zero != 0)
        return Copy::Bad;
    return Copy::Valid;
}

} // namespace

ktl::Result<SuperblockRead> read_superblock(BlockDevice& dev, std::span<std::byte> scratch) {
    const uint32_t sector = dev.sector_size();
    if (scratch.size() < sector || sector < kBytes + 4 || dev.sectors() < 2)
        return ktl::Error::InvalidArgs;
    Superblock copies[2];
    Copy state[2];
    for (uint64_t i = 0; i < 2; ++i) {
        if (auto r = dev.read(i, scratch.first(sector)); !r)
            return r.error();
        state[i] = parse(scratch.first(sector), sector, copies[i]);
    }
    if (state[0] == Copy::Blank && state[1] == Copy::Blank)
        return ktl::Error::NotFound;
    const bool v0 = state[0] == Copy::Valid, v1 = state[1] == Copy::Valid;
    if (!v0 && !v1)
        return ktl::Error::Corrupt;
    SuperblockRead out;
    out.sb = v0 && (!v1 || copies[0].generation >= copies[1].generation) ? copies[0] : copies[1];
    // A copy never written yet (the first update only wrote one) is not damage.
    out.copy_damaged = state[0] == Copy::Bad || state[1] == Copy::Bad;
    return out;
}

ktl::Result<uint64_t> write_superblock(BlockDevice& dev, const Superblock& current, Superblock next,
                                       std::span<std::byte> scratch) {
    const uint32_t sector = dev.sector_size();
    if (scratch.size() < sector || sector < kBytes + 4 || dev.sectors() < 2)
        return ktl::Error::InvalidArgs;
    next.generation = current.generation + 1;
    std::memset(scratch.data(), 0, sector);
    std::memcpy(scratch.data(), kMagic, 8);
    std::byte* p = scratch.data();
    put_le<uint32_t>(p + kVersionAt, kVersion);
    put_le<uint32_t>(p + kSectorAt, sector);
    put_le<uint64_t>(p + kGenerationAt, next.generation);
    put_le<uint32_t>(p + kEpochAt, next.epoch);
    put_le<uint64_t>(p + kLogFirstAt, next.log_first);
    put_le<uint64_t>(p + kLogCountAt, next.log_count);
    put_le<uint64_t>(p + kCheckpointFirstAt, next.checkpoint_first);
    put_le<uint64_t>(p + kCheckpointBytesAt, next.checkpoint_bytes);
    put_le<uint32_t>(p + kCheckpointCrcAt, next.checkpoint_crc);
    put_le<uint32_t>(p + kCrcAt, crc32c(0, p, kBytes));
    // Generation g lives in copy g % 2: the copy holding the current one is never touched.
    if (auto r = dev.write(next.generation % 2, scratch.first(sector)); !r)
        return r.error();
    if (auto f = dev.flush(); !f)
        return f.error();
    return next.generation;
}

} // namespace storage

#include "superblock.h"
#include "crc32c.h"

#include <cstring>

namespace storage {
namespace {

constexpr uint8_t kMagic[8] = { 'B', 'S', 'L', 'T', 'S', 'U', 'P', 'R' };
constexpr uint32_t kVersion = 1;
constexpr size_t kBytes = 68; // the CRC's offset

struct Writer {
    std::byte* p;
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i)
            *p++ = std::byte(uint8_t(v >> (8 * i)));
    }
    void u64(uint64_t v) {
        for (int i = 0; i < 8; ++i)
            *p++ = std::byte(uint8_t(v >> (8 * i)));
    }
};
struct Reader {
    const std::byte* p;
    uint32_t u32() {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= uint32_t(uint8_t(*p++)) << (8 * i);
        return v;
    }
    uint64_t u64() {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= uint64_t(uint8_t(*p++)) << (8 * i);
        return v;
    }
};

enum class Copy { Valid, Blank, Bad };

Copy parse(std::span<const std::byte> s, uint32_t sector, Superblock& out) {
    bool blank = true;
    for (std::byte b : s)
        blank = blank && b == std::byte { 0 };
    if (blank)
        return Copy::Blank;
    if (std::memcmp(s.data(), kMagic, 8) != 0)
        return Copy::Bad;
    Reader r { s.data() + 8 };
    const uint32_t version = r.u32(), size = r.u32();
    out.generation = r.u64();
    out.epoch = r.u32();
    const uint32_t zero = r.u32();
    out.log_first = r.u64();
    out.log_count = r.u64();
    out.checkpoint_first = r.u64();
    out.checkpoint_bytes = r.u64();
    out.checkpoint_crc = r.u32();
    const uint32_t crc = r.u32();
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
    Writer w { scratch.data() + 8 };
    w.u32(kVersion);
    w.u32(sector);
    w.u64(next.generation);
    w.u32(next.epoch);
    w.u32(0);
    w.u64(next.log_first);
    w.u64(next.log_count);
    w.u64(next.checkpoint_first);
    w.u64(next.checkpoint_bytes);
    w.u32(next.checkpoint_crc);
    w.u32(crc32c(0, scratch.data(), kBytes));
    // Generation g lives in copy g % 2: the copy holding the current one is never touched.
    if (auto r = dev.write(next.generation % 2, scratch.first(sector)); !r)
        return r.error();
    if (auto f = dev.flush(); !f)
        return f.error();
    return next.generation;
}

} // namespace storage

#include "checkpoint.h"
#include "crc32c.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace storage {
namespace {

constexpr uint8_t kMagic[8] = { 'B', 'S', 'L', 'T', 'C', 'K', 'P', 'T' };
constexpr uint32_t kVersion = 1;
constexpr size_t kFixed = 32;
constexpr size_t kEntry = 96;
constexpr size_t kCrcAt = kCheckpointHeaderBytes - 4;
static_assert(kFixed + kMaxCheckpointEntries * kEntry <= kCrcAt, "the entries fit before the CRC");

using ktl::get_le;
using ktl::put_le;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace

bool add_piece(CheckpointHeader& h, PieceKind kind, std::string_view name, uint64_t length, uint32_t crc,
               uint32_t extra, uint32_t flags, uint32_t sector) {
    if (h.count >= kMaxCheckpointEntries || name.size() > 64 || sector == 0)
        return false;
    uint64_t offset = align_up(kCheckpointHeaderBytes, sector);
    if (h.count > 0) {
        const CheckpointEntry& last = h.entries[h.count - 1];
        offset = align_up(last.offset + last.length, sector);
    }
    CheckpointEntry& e = h.entries[h.count++];
    e = CheckpointEntry {};
    e.kind = kind;
    e.name_length = static_cast<uint8_t>(name.size());
    std::memcpy(e.name, name.data(), name.size());
    e.flags = flags;
    e.offset = offset;
    e.length = length;
    e.crc = crc;
    e.extra = extra;
    h.bytes = align_up(offset + length, sector);
    return true;
}

uint32_t encode_checkpoint_header(std::span<std::byte> out, const CheckpointHeader& h) {
    std::byte* p = out.data();
    std::memset(p, 0, kCheckpointHeaderBytes);
    std::memcpy(p, kMagic, 8);
    put_le<uint32_t>(p + 8, kVersion);
    put_le<uint32_t>(p + 12, h.count);
    put_le<uint32_t>(p + 16, h.epoch);
    put_le<uint64_t>(p + 24, h.bytes);
    for (uint32_t i = 0; i < h.count && i < kMaxCheckpointEntries; ++i) {
        const CheckpointEntry& e = h.entries[i];
        std::byte* q = p + kFixed + i * kEntry;
        q[0] = std::byte(e.kind);
        q[1] = std::byte(e.name_length);
        put_le<uint32_t>(q + 4, e.flags);
        std::memcpy(q + 8, e.name, e.name_length);
        put_le<uint64_t>(q + 72, e.offset);
        put_le<uint64_t>(q + 80, e.length);
        put_le<uint32_t>(q + 88, e.crc);
        put_le<uint32_t>(q + 92, e.extra);
    }
    const uint32_t crc = crc32c(0, p, kCrcAt);
    put_le<uint32_t>(p + kCrcAt, crc);
    return crc;
}

ktl::Result<CheckpointHeader> decode_checkpoint_header(std::span<const std::byte> in, uint32_t expected_crc,
                                                       uint32_t sector) {
    if (in.size() < kCheckpointHeaderBytes || sector == 0)
        return ktl::Error::InvalidArgs;
    const std::byte* p = in.data();
    const uint32_t crc = crc32c(0, p, kCrcAt);
    if (std::memcmp(p, kMagic, 8) != 0 || get_le<uint32_t>(p + kCrcAt) != crc || crc != expected_crc)
        return ktl::Error::Corrupt;
    if (get_le<uint32_t>(p + 8) != kVersion)
        return ktl::Error::Unsupported;
    CheckpointHeader h;
    h.count = get_le<uint32_t>(p + 12);
    h.epoch = get_le<uint32_t>(p + 16);
    h.bytes = get_le<uint64_t>(p + 24);
    if (h.count > kMaxCheckpointEntries)
        return ktl::Error::Corrupt;
    uint64_t next = align_up(kCheckpointHeaderBytes, sector);
    for (uint32_t i = 0; i < h.count; ++i) {
        const std::byte* q = p + kFixed + i * kEntry;
        CheckpointEntry& e = h.entries[i];
        e.kind = static_cast<PieceKind>(std::to_integer<uint8_t>(q[0]));
        e.name_length = std::to_integer<uint8_t>(q[1]);
        e.flags = get_le<uint32_t>(q + 4);
        e.offset = get_le<uint64_t>(q + 72);
        e.length = get_le<uint64_t>(q + 80);
        e.crc = get_le<uint32_t>(q + 88);
        e.extra = get_le<uint32_t>(q + 92);
        if ((e.kind != PieceKind::Collection && e.kind != PieceKind::Audit && e.kind != PieceKind::Raft) ||
            e.name_length > 64 || e.offset < next || e.offset % sector != 0 || e.length > h.bytes ||
            e.offset > h.bytes - e.length)
            return ktl::Error::Corrupt;
        std::memcpy(e.name, q + 8, e.name_length);
        next = e.offset + e.length;
    }
    return h;
}

} // namespace storage

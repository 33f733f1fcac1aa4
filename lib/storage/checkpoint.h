#pragma once
// A checkpoint: everything durable at one moment, so the log before it can be dropped. The
// collections go in the vector store's own snapshot format, the audit trail as its records; a
// header names each piece with its place, length and CRC-32C. The superblock points at the header
// (and carries its CRC): a checkpoint counts only once the superblock names it, so one cut short
// by a power failure is never read, and the previous one stays valid until then (checkpoints
// alternate between two areas of the disk).
//
// Header (kCheckpointHeaderBytes, little-endian): "BSLTCKPT", u32 version (1), u32 entries,
// u32 epoch (the log epoch that follows it), u32 0, u64 total bytes, then `entries` entries of 96
// bytes: u8 kind (1 collection, 2 audit trail, 3 the Raft groups' stream, lib/raft/log_image.h), u8 name length, u16 0,
// u32 flags, name[64], u64 offset (from the checkpoint's start, sector-aligned, after the header), u64 length, u32
// CRC-32C of the piece, u32 extra (a collection's capacity; the audit record size); the header's last 4 bytes are the
// CRC-32C of everything before them.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace storage {

constexpr size_t kCheckpointHeaderBytes = 4096;
constexpr uint32_t kMaxCheckpointEntries = 40;

enum class PieceKind : uint8_t { Collection = 1, Audit = 2, Raft = 3 };

struct CheckpointEntry {
    PieceKind kind;
    uint8_t name_length;
    uint32_t flags;
    char name[65];
    uint64_t offset;
    uint64_t length;
    uint32_t crc;
    uint32_t extra;
    std::string_view name_view() const { return { name, name_length }; }
};

struct CheckpointHeader {
    uint32_t epoch = 0;
    uint64_t bytes = 0;
    uint32_t count = 0;
    CheckpointEntry entries[kMaxCheckpointEntries] = {};
};

// Adds a piece at the end (sector-aligned after the previous one); false when full or the name
// does not fit. `sector`: the disk's sector size.
bool add_piece(CheckpointHeader& h, PieceKind kind, std::string_view name, uint64_t length, uint32_t crc,
               uint32_t extra, uint32_t flags, uint32_t sector);
// The header's bytes (out: kCheckpointHeaderBytes); its CRC (what the superblock keeps).
uint32_t encode_checkpoint_header(std::span<std::byte> out, const CheckpointHeader& h);
// Corrupt for a bad magic, CRC (also against `expected_crc`), or pieces that overlap, leave the
// checkpoint or are not sector-aligned after the header.
ktl::Result<CheckpointHeader> decode_checkpoint_header(std::span<const std::byte> in, uint32_t expected_crc,
                                                       uint32_t sector);

} // namespace storage

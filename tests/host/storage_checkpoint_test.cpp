// The checkpoint header: pieces placed sector-aligned one after another, the header round-trips,
// and any change to it (or a CRC other than the superblock's) is refused, as are pieces that
// overlap or leave the checkpoint.
#include <storage/checkpoint.h>

#include <gtest/gtest.h>

#include <vector>

using namespace storage;

namespace {

CheckpointHeader sample() {
    CheckpointHeader h;
    h.epoch = 5;
    EXPECT_TRUE(add_piece(h, PieceKind::Collection, "docs", 85312, 0x1234, 100000, 0, 512));
    EXPECT_TRUE(add_piece(h, PieceKind::Collection, std::string(64, 'z'), 1, 0x55, 7, 1, 512));
    EXPECT_TRUE(add_piece(h, PieceKind::Audit, "", 376 * 3, 0x77, 376, 0, 512));
    return h;
}

} // namespace

TEST(StorageCheckpoint, PiecesAreSectorAlignedAfterTheHeader) {
    CheckpointHeader h = sample();
    EXPECT_EQ(h.entries[0].offset, kCheckpointHeaderBytes);
    EXPECT_EQ(h.entries[1].offset, kCheckpointHeaderBytes + 85504); // 85312 rounded up to 512
    EXPECT_EQ(h.entries[2].offset, h.entries[1].offset + 512);
    EXPECT_EQ(h.bytes, h.entries[2].offset + 1536);
    EXPECT_FALSE(add_piece(h, PieceKind::Collection, std::string(65, 'x'), 1, 0, 0, 0, 512));
}

TEST(StorageCheckpoint, HeaderRoundTripsAndRefusesAnyChange) {
    CheckpointHeader h = sample();
    std::vector<std::byte> buf(kCheckpointHeaderBytes);
    const uint32_t crc = encode_checkpoint_header(buf, h);
    auto d = decode_checkpoint_header(buf, crc, 512);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->epoch, 5u);
    EXPECT_EQ(d->count, 3u);
    EXPECT_EQ(d->bytes, h.bytes);
    EXPECT_EQ(d->entries[0].name_view(), "docs");
    EXPECT_EQ(d->entries[0].extra, 100000u);
    EXPECT_EQ(d->entries[1].name_view().size(), 64u);
    EXPECT_EQ(d->entries[1].flags, 1u);
    EXPECT_EQ(d->entries[2].kind, PieceKind::Audit);
    EXPECT_EQ(d->entries[2].crc, 0x77u);
    EXPECT_FALSE(decode_checkpoint_header(buf, crc ^ 1, 512)); // not the one the superblock names
    for (size_t at : { size_t(0), size_t(13), size_t(40), size_t(200), kCheckpointHeaderBytes - 1 }) {
        auto bad = buf;
        bad[at] ^= std::byte(0x10);
        EXPECT_FALSE(decode_checkpoint_header(bad, crc, 512)) << at;
    }
}

TEST(StorageCheckpoint, RefusesPiecesThatOverlapOrLeave) {
    std::vector<std::byte> buf(kCheckpointHeaderBytes);
    CheckpointHeader h = sample();
    h.entries[1].offset = h.entries[0].offset + 512; // inside the first piece
    EXPECT_FALSE(decode_checkpoint_header(buf, encode_checkpoint_header(buf, h), 512));
    h = sample();
    h.entries[2].length = h.bytes; // past the end
    EXPECT_FALSE(decode_checkpoint_header(buf, encode_checkpoint_header(buf, h), 512));
    h = sample();
    h.entries[0].offset = 100; // inside the header, not aligned
    EXPECT_FALSE(decode_checkpoint_header(buf, encode_checkpoint_header(buf, h), 512));
    h = sample();
    h.count = kMaxCheckpointEntries + 1;
    EXPECT_FALSE(decode_checkpoint_header(buf, encode_checkpoint_header(buf, h), 512));
}

// The superblock's two copies: a power cut during any update, leaving the copy being written as
// it was, torn or garbage, always reads back as the last acknowledged generation or the one being
// written, never garbage and never older; a fresh disk, a foreign disk and one damaged copy are
// each told apart.
#include <storage/superblock.h>

#include <gtest/gtest.h>

#include "support/sim_disk.h"

namespace {

storage::Superblock state(uint64_t n) {
    storage::Superblock sb;
    sb.epoch = uint32_t(n);
    sb.log_first = 2;
    sb.log_count = 1000 + n;
    sb.checkpoint_first = n ? 2000 : 0;
    sb.checkpoint_bytes = n * 4096;
    sb.checkpoint_crc = uint32_t(n * 2654435761u);
    return sb;
}

} // namespace

TEST(StorageSuperblock, EveryPowerCutLeavesTheLastAcknowledgedOrTheNewGeneration) {
    std::vector<std::byte> scratch(kSector);
    for (uint64_t cut = 0; cut < 6; ++cut)
        for (Tear tear : { Tear::None, Tear::Half, Tear::Garbage }) {
            SimDisk disk(8);
            disk.crash_at(cut, tear);
            storage::Superblock current;
            uint64_t acknowledged = 0;
            for (uint64_t n = 1; n <= 6; ++n) {
                auto g = storage::write_superblock(disk, current, state(n), scratch);
                if (!g)
                    break;
                ASSERT_EQ(*g, n);
                current = state(n);
                current.generation = *g;
                acknowledged = n;
            }
            disk.power_on();
            auto got = storage::read_superblock(disk, scratch);
            if (!got) {
                // Only before anything was acknowledged: a fresh disk, or its one copy garbage.
                EXPECT_EQ(acknowledged, 0u) << "cut " << cut;
                EXPECT_EQ(got.error(), tear == Tear::None ? ktl::Error::NotFound : ktl::Error::Corrupt);
                continue;
            }
            // The last acknowledged generation, or the one being written if all of it landed (a
            // torn sector whose first half holds the whole superblock is a complete write).
            EXPECT_TRUE(got->sb.generation == acknowledged || got->sb.generation == acknowledged + 1) << "cut " << cut;
            EXPECT_TRUE(got->sb.generation == acknowledged + 1 ? tear != Tear::Garbage : true);
            const auto want = state(got->sb.generation);
            EXPECT_EQ(got->sb.log_count, want.log_count);
            EXPECT_EQ(got->sb.checkpoint_crc, want.checkpoint_crc);
            EXPECT_EQ(got->copy_damaged, tear == Tear::Garbage) << "a garbage copy is reported, cut " << cut;
        }
}

TEST(StorageSuperblock, FreshForeignAndDamagedDisks) {
    std::vector<std::byte> scratch(kSector);
    SimDisk fresh(8);
    EXPECT_EQ(storage::read_superblock(fresh, scratch).error(), ktl::Error::NotFound);
    SimDisk foreign(8);
    for (size_t i = 0; i < 2 * kSector; ++i)
        foreign.bytes()[i] = std::byte(uint8_t(i * 7 + 1));
    EXPECT_EQ(storage::read_superblock(foreign, scratch).error(), ktl::Error::Corrupt);
    SimDisk disk(8);
    storage::Superblock current;
    for (uint64_t n = 1; n <= 3; ++n) {
        auto g = storage::write_superblock(disk, current, state(n), scratch);
        ASSERT_TRUE(g.ok());
        current = state(n);
        current.generation = *g;
    }
    auto both = storage::read_superblock(disk, scratch);
    ASSERT_TRUE(both.ok());
    EXPECT_EQ(both->sb.generation, 3u);
    EXPECT_FALSE(both->copy_damaged);
    disk.bytes()[1 * kSector + 40] ^= std::byte { 1 }; // generation 3 lives in copy 1
    auto one = storage::read_superblock(disk, scratch);
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(one->sb.generation, 2u) << "the other copy, one generation older";
    EXPECT_TRUE(one->copy_damaged);
    disk.bytes()[0 * kSector + 20] ^= std::byte { 1 };
    EXPECT_EQ(storage::read_superblock(disk, scratch).error(), ktl::Error::Corrupt);
}

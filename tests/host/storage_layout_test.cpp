// Where checkpoints go: alternating halves of what the disk has past the log, and never over the
// current checkpoint, also after the image was grown (what a user does when it is full) with the
// current checkpoint where the old halves were.
#include <storage/layout.h>

#include <gtest/gtest.h>

using storage::Extent;
using storage::next_checkpoint_area;

namespace {
constexpr uint64_t kLogEnd = 2048 + 4096; // superblock MiB, a 2 MiB log
}

TEST(StorageLayout, AlternatesBetweenHalvesOfAnUnchangedDisk) {
    const uint64_t disk = kLogEnd + 10000;
    Extent a = next_checkpoint_area(kLogEnd, disk, {});
    EXPECT_EQ(a.first, kLogEnd);
    EXPECT_EQ(a.sectors, 5000u);
    Extent b = next_checkpoint_area(kLogEnd, disk, { a.first, 3000 });
    EXPECT_EQ(b.first, kLogEnd + 5000);
    EXPECT_EQ(b.sectors, 5000u);
    Extent c = next_checkpoint_area(kLogEnd, disk, { b.first, 4999 });
    EXPECT_EQ(c.first, a.first);
    EXPECT_EQ(c.sectors, a.sectors);
}

TEST(StorageLayout, NeverOverlapsTheCurrentCheckpointAfterTheDiskGrew) {
    // Every size before, every live checkpoint size in the second old half, every size after.
    for (uint64_t before = 1000; before <= 20000; before += 1900) {
        const uint64_t old_half = before / 2;
        for (uint64_t live_sectors = 1; live_sectors <= old_half; live_sectors += old_half / 7 + 1) {
            for (int live_half = 0; live_half < 2; ++live_half) {
                const Extent live { kLogEnd + live_half * old_half, live_sectors };
                for (uint64_t after = before; after <= before * 5; after += before / 3 + 1) {
                    const Extent next = next_checkpoint_area(kLogEnd, kLogEnd + after, live);
                    ASSERT_FALSE(next.overlaps(live))
                        << before << " -> " << after << ", live " << live.first << "+" << live.sectors;
                    ASSERT_GE(next.first, kLogEnd);
                    ASSERT_LE(next.end(), kLogEnd + after);
                    // Growing never leaves less room than the disk had before.
                    ASSERT_GE(next.sectors, old_half) << before << " -> " << after;
                }
            }
        }
    }
}

TEST(StorageLayout, AGrownDiskGetsItsLargerHalvesBack) {
    // The current checkpoint in the second half of an 8,000-sector area; the disk is doubled.
    const Extent live { kLogEnd + 4000, 3900 };
    const uint64_t disk = kLogEnd + 16000;
    Extent next = next_checkpoint_area(kLogEnd, disk, live);
    EXPECT_FALSE(next.overlaps(live));
    EXPECT_EQ(next.first, kLogEnd + 8000) << "the new second half is clear of it";
    EXPECT_EQ(next.sectors, 8000u);
    // Grown by a little only: the new halves both overlap it; the larger gap is taken (here the
    // one before it: the old first half).
    const uint64_t small = kLogEnd + 9000;
    next = next_checkpoint_area(kLogEnd, small, live);
    EXPECT_FALSE(next.overlaps(live));
    EXPECT_EQ(next.first, kLogEnd);
    EXPECT_EQ(next.sectors, 4000u);
    // From there, the one after is in the new second half, which is clear of it.
    const Extent second { next.first, 3990 };
    Extent third = next_checkpoint_area(kLogEnd, small, second);
    EXPECT_FALSE(third.overlaps(second));
    EXPECT_EQ(third.first, kLogEnd + 4500);
    EXPECT_EQ(third.sectors, 4500u);
}

TEST(StorageLayout, NoRoomPastTheLog) {
    EXPECT_EQ(next_checkpoint_area(kLogEnd, kLogEnd, {}).sectors, 0u);
    EXPECT_EQ(next_checkpoint_area(kLogEnd, kLogEnd - 5, {}).sectors, 0u);
}

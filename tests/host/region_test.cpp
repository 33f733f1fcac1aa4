// Memory-region policies: immutable regions freeze at seal, append-only regions never change
// what they hold, slab regions confine access to live objects.
#include <mm/region.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {
std::span<const std::byte> bytes(const char* s) { return { reinterpret_cast<const std::byte*>(s), strlen(s) }; }
} // namespace

TEST(Region, ImmutableIsWritableUntilSealed) {
    std::vector<std::byte> mem(64);
    auto r = mm::Region::create(mem, mm::RegionPolicy::Immutable);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->write(0, bytes("hello")).ok());
    ASSERT_TRUE(r->write(10, bytes("world")).ok());
    EXPECT_EQ(r->used(), 15u);
    std::byte out[5];
    ASSERT_TRUE(r->read(10, out).ok());
    EXPECT_EQ(memcmp(out, "world", 5), 0);
    EXPECT_EQ(r->read(12, out).error(), ktl::Error::OutOfRange) << "past the filled part";
    ASSERT_TRUE(r->seal().ok());
    EXPECT_EQ(r->write(0, bytes("HELLO")).error(), ktl::Error::AccessDenied);
    EXPECT_EQ(r->seal().error(), ktl::Error::Exists);
    ASSERT_TRUE(r->read(0, out).ok());
    EXPECT_EQ(memcmp(out, "hello", 5), 0) << "sealed content changed";
    EXPECT_EQ(r->write(60, bytes("toolong")).error(), ktl::Error::OutOfRange);
    EXPECT_EQ(r->append(bytes("x")).error(), ktl::Error::AccessDenied);
}

TEST(Region, AppendOnlyNeverRewrites) {
    std::vector<std::byte> mem(16);
    auto r = mm::Region::create(mem, mm::RegionPolicy::AppendOnly);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r->append(bytes("abc")), 0u);
    EXPECT_EQ(*r->append(bytes("defg")), 3u);
    EXPECT_EQ(r->write(0, bytes("X")).error(), ktl::Error::AccessDenied);
    EXPECT_EQ(r->append(bytes("0123456789")).error(), ktl::Error::Full);
    std::byte out[7];
    ASSERT_TRUE(r->read(0, out).ok());
    EXPECT_EQ(memcmp(out, "abcdefg", 7), 0);
    ASSERT_TRUE(r->seal().ok());
    EXPECT_EQ(r->append(bytes("h")).error(), ktl::Error::AccessDenied);
}

TEST(Region, SlabConfinesAccessToLiveObjects) {
    std::vector<std::byte> mem(1000);
    auto r = mm::Region::create(mem, mm::RegionPolicy::Slab, 100);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->object_size(), 100u);
    std::vector<uint32_t> got;
    while (auto i = r->alloc_object())
        got.push_back(*i);
    EXPECT_EQ(got.size(), 9u) << "9 objects + bitmap fit in 1000 bytes";
    EXPECT_TRUE(r->write(250, bytes("inside")).ok());
    EXPECT_EQ(r->write(295, bytes("straddle")).error(), ktl::Error::AccessDenied) << "crosses into the next object";
    ASSERT_TRUE(r->free_object(2).ok());
    EXPECT_EQ(r->write(250, bytes("x")).error(), ktl::Error::AccessDenied) << "freed object";
    std::byte out[1];
    EXPECT_EQ(r->read(250, out).error(), ktl::Error::OutOfRange);
    EXPECT_EQ(r->free_object(2).error(), ktl::Error::InvalidArgs) << "double free";
    auto again = r->alloc_object();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, 2u);
    std::byte first[6];
    ASSERT_TRUE(r->read(250, first).ok());
    for (auto b : first)
        EXPECT_EQ(b, std::byte { 0 }) << "a reused object must not leak old data";
    EXPECT_EQ(r->seal().error(), ktl::Error::Unsupported);
}

TEST(Region, RejectsBadParameters) {
    std::vector<std::byte> mem(64);
    EXPECT_FALSE(mm::Region::create({}, mm::RegionPolicy::Immutable).ok());
    EXPECT_FALSE(mm::Region::create(mem, mm::RegionPolicy::Slab, 0).ok());
    EXPECT_FALSE(mm::Region::create(mem, mm::RegionPolicy::Slab, 65).ok());
    EXPECT_FALSE(mm::Region::create(mem, mm::RegionPolicy::Immutable, 8).ok());
    EXPECT_FALSE(mm::Region::create(mem, static_cast<mm::RegionPolicy>(7)).ok());
}

TEST(Region, AppendOnlyPropertyEarlierBytesNeverChange) {
    std::vector<std::byte> mem(4096);
    auto r = mm::Region::create(mem, mm::RegionPolicy::AppendOnly);
    ASSERT_TRUE(r.ok());
    std::vector<std::byte> model;
    std::mt19937 rng(9);
    for (int step = 0; step < 2000; ++step) {
        std::vector<std::byte> chunk(rng() % 40);
        for (auto& b : chunk)
            b = std::byte(rng());
        uint64_t off = rng() % 4096;
        if (rng() % 2) {
            auto a = r->append(chunk);
            if (a.ok()) {
                ASSERT_EQ(*a, model.size());
                model.insert(model.end(), chunk.begin(), chunk.end());
            } else {
                ASSERT_EQ(a.error(), ktl::Error::Full);
            }
        } else {
            EXPECT_FALSE(r->write(off, chunk).ok());
        }
        std::vector<std::byte> all(model.size());
        ASSERT_TRUE(r->read(0, all).ok());
        ASSERT_EQ(all, model);
    }
}

// A ring of whole records: appends never fail for want of room, the oldest give way, every record
// still held reads back exactly as appended (by its logical offset), and overwritten ones are
// refused rather than read back as something else.
TEST(Region, RingKeepsTheNewestRecordsWhole) {
    std::vector<std::byte> mem(100); // 6 records of 16 bytes (4 bytes unused)
    auto r = mm::Region::create(mem, mm::RegionPolicy::Ring, 16);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->append(bytes("short")).error(), ktl::Error::InvalidArgs) << "whole records only";
    EXPECT_EQ(r->write(0, bytes("0123456789abcdef")).error(), ktl::Error::AccessDenied);
    char rec[17];
    for (int i = 0; i < 20; ++i) {
        snprintf(rec, sizeof rec, "record-%09d", i);
        auto at = r->append(bytes(rec));
        ASSERT_TRUE(at.ok());
        EXPECT_EQ(*at, uint64_t(i) * 16);
        EXPECT_EQ(r->appended(), uint64_t(i) + 1);
        EXPECT_EQ(r->first_held(), i + 1 > 6 ? uint64_t(i + 1 - 6) : 0u);
    }
    EXPECT_EQ(r->used(), 96u);
    std::byte out[16];
    for (uint64_t i = 0; i < 20; ++i) {
        auto got = r->read(i * 16, out);
        if (i < 14) {
            EXPECT_EQ(got.error(), ktl::Error::OutOfRange) << "record " << i << " was overwritten";
            continue;
        }
        ASSERT_TRUE(got.ok()) << i;
        snprintf(rec, sizeof rec, "record-%09d", static_cast<int>(i));
        EXPECT_EQ(memcmp(out, rec, 16), 0) << i;
    }
    EXPECT_EQ(r->read(20 * 16, out).error(), ktl::Error::OutOfRange) << "not yet written";
    EXPECT_EQ(r->read(14 * 16 + 1, out).error(), ktl::Error::OutOfRange) << "not a record boundary";
    EXPECT_FALSE(mm::Region::create(mem, mm::RegionPolicy::Ring, 0).ok());
}

// Pages come with whatever they held; a region hands out none of it: bytes never written read
// back as zero (an Immutable region's high-water mark makes the gap before a write readable).
TEST(Region, StaleMemoryIsNeverReadable) {
    std::vector<std::byte> mem(256, std::byte { 0xa5 });
    auto r = mm::Region::create(mem, mm::RegionPolicy::Immutable);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->write(200, bytes("x")).ok());
    std::byte out[200];
    ASSERT_TRUE(r->read(0, out).ok());
    for (auto b : out)
        ASSERT_EQ(b, std::byte { 0 });
}

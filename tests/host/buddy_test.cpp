// Buddy allocator against a reference model: random alloc/free sequences never overlap, never
// leak, and coalesce back to the initial block structure.
#include <mm/buddy.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace {

struct Fixture {
    explicit Fixture(size_t pages, uint64_t base = 0x40000000) : meta(pages) {
        EXPECT_TRUE(buddy.init(base, pages, meta.data(), meta.size() * sizeof(mm::PageFrame)).ok());
    }
    std::vector<mm::PageFrame> meta;
    mm::BuddyAllocator buddy;
};

} // namespace

TEST(Buddy, RejectsBadInit) {
    std::vector<mm::PageFrame> meta(4);
    mm::BuddyAllocator b;
    EXPECT_EQ(b.init(0x1001, 4, meta.data(), 4 * sizeof(mm::PageFrame)).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(b.init(0x1000, 8, meta.data(), 4 * sizeof(mm::PageFrame)).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(b.init(0x1000, 0, meta.data(), 4 * sizeof(mm::PageFrame)).error(), ktl::Error::InvalidArgs);
}

TEST(Buddy, ReservedPagesAreNeverHandedOut) {
    Fixture f(64);
    // Only pages 16..47 are usable.
    f.buddy.add_free_range(0x40000000 + 16 * 4096, 32 * 4096);
    EXPECT_EQ(f.buddy.stats().free_pages, 32u);
    std::vector<uint64_t> got;
    while (auto r = f.buddy.alloc(0))
        got.push_back(*r);
    ASSERT_EQ(got.size(), 32u);
    for (uint64_t a : got) {
        EXPECT_GE(a, 0x40000000u + 16 * 4096);
        EXPECT_LT(a, 0x40000000u + 48 * 4096);
    }
    EXPECT_EQ(f.buddy.alloc(0).error(), ktl::Error::NoMemory);
}

// Ranges are released a whole block at a time: overlapping releases, and a release over pages
// already handed out, still give every page once and end in the same maximal blocks as releasing
// page by page.
TEST(Buddy, OverlappingReleasesGiveEachPageOnce) {
    Fixture f(1000);
    f.buddy.add_free_range(0x40000000 + 5 * 4096, 100 * 4096);
    auto held = f.buddy.alloc(4);
    ASSERT_TRUE(held.ok());
    f.buddy.add_free_range(0x40000000 + 3 * 4096, 900 * 4096); // covers the first range and the held block
    auto s = f.buddy.stats();
    EXPECT_EQ(s.total_pages, 900u);
    EXPECT_EQ(s.free_pages, 900u - 16);
    Fixture g(1000); // the same pages released one at a time
    for (uint64_t p = 3; p < 903; ++p)
        if (p < *held / 4096 - 0x40000 || p >= *held / 4096 - 0x40000 + 16)
            g.buddy.add_free_range(0x40000000 + p * 4096, 4096);
    auto t = g.buddy.stats();
    for (unsigned o = 0; o <= mm::BuddyAllocator::kMaxOrder; ++o)
        EXPECT_EQ(s.free_blocks[o], t.free_blocks[o]) << "order " << o;
    std::vector<uint64_t> got;
    while (auto r = f.buddy.alloc(0))
        got.push_back(*r);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got.size(), 900u - 16);
    EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "a page handed out twice";
    for (uint64_t a : got)
        EXPECT_TRUE(a < *held || a >= *held + 16 * 4096) << "a held page handed out again";
}

TEST(Buddy, SplitAndCoalesce) {
    Fixture f(1024);
    f.buddy.add_free_range(0x40000000, 1024 * 4096);
    auto s0 = f.buddy.stats();
    EXPECT_EQ(s0.largest_free_order, 10u);
    EXPECT_EQ(s0.free_blocks[10], 1u);
    auto a = f.buddy.alloc(0);
    ASSERT_TRUE(a.ok());
    auto s1 = f.buddy.stats();
    EXPECT_EQ(s1.largest_free_order, 9u);
    for (unsigned o = 0; o < 10; ++o)
        EXPECT_EQ(s1.free_blocks[o], 1u) << "order " << o;
    ASSERT_TRUE(f.buddy.free(*a, 0).ok());
    auto s2 = f.buddy.stats();
    EXPECT_EQ(s2.free_blocks[10], 1u) << "freeing must coalesce back to one block";
    EXPECT_EQ(s2.free_pages, 1024u);
}

TEST(Buddy, RefusesBadFrees) {
    Fixture f(16);
    f.buddy.add_free_range(0x40000000, 16 * 4096);
    auto a = f.buddy.alloc(2);
    ASSERT_TRUE(a.ok());
    EXPECT_FALSE(f.buddy.free(*a, 1).ok()) << "wrong order";
    EXPECT_FALSE(f.buddy.free(*a + 4096, 0).ok()) << "tail page";
    EXPECT_FALSE(f.buddy.free(*a + 1, 2).ok()) << "unaligned";
    EXPECT_FALSE(f.buddy.free(0x1000, 0).ok()) << "outside the span";
    EXPECT_TRUE(f.buddy.free(*a, 2).ok());
    EXPECT_FALSE(f.buddy.free(*a, 2).ok()) << "double free";
    EXPECT_EQ(f.buddy.stats().free_pages, 16u);
}

TEST(Buddy, OwnerAccounting) {
    Fixture f(64);
    f.buddy.add_free_range(0x40000000, 64 * 4096);
    auto a = f.buddy.alloc(3, 7);
    auto b = f.buddy.alloc(0, 7);
    auto c = f.buddy.alloc(1, 9);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ(f.buddy.pages_owned_by(7), 9u);
    EXPECT_EQ(f.buddy.pages_owned_by(9), 2u);
    ASSERT_TRUE(f.buddy.free(*a, 3).ok());
    EXPECT_EQ(f.buddy.pages_owned_by(7), 1u);
    // Owners past the counted ones are found by a scan; both ways agree as blocks come and go.
    auto d = f.buddy.alloc(2, 300);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(f.buddy.pages_owned_by(300), 4u);
    EXPECT_FALSE(f.buddy.free(*c, 0).ok()) << "a refused free changes no count";
    EXPECT_EQ(f.buddy.pages_owned_by(9), 2u);
    ASSERT_TRUE(f.buddy.free(*b, 0).ok() && f.buddy.free(*c, 1).ok() && f.buddy.free(*d, 2).ok());
    EXPECT_EQ(f.buddy.pages_owned_by(7), 0u);
    EXPECT_EQ(f.buddy.pages_owned_by(9), 0u);
    EXPECT_EQ(f.buddy.pages_owned_by(300), 0u);
}

TEST(Buddy, RandomSequencesMatchReferenceModel) {
    for (uint32_t seed = 1; seed <= 20; ++seed) {
        const size_t pages = 777; // deliberately not a power of two
        Fixture f(pages);
        // Two usable ranges with a hole, like RAM minus a reserved region.
        f.buddy.add_free_range(0x40000000 + 3 * 4096, 300 * 4096);
        f.buddy.add_free_range(0x40000000 + 400 * 4096, 377 * 4096);
        const uint64_t usable = 300 + 377;
        std::mt19937 rng(seed);
        std::map<uint64_t, unsigned> live; // addr -> order
        uint64_t live_pages = 0;
        for (int step = 0; step < 5000; ++step) {
            if (live.empty() || rng() % 3 != 0) {
                unsigned order = rng() % 6;
                auto r = f.buddy.alloc(order);
                if (!r.ok()) {
                    ASSERT_EQ(r.error(), ktl::Error::NoMemory);
                    continue;
                }
                uint64_t a = *r, size = 4096ull << order;
                ASSERT_EQ((a - 0x40000000) % size, 0u) << "blocks are aligned to their size";
                bool in_first = a >= 0x40000000 + 3 * 4096 && a + size <= 0x40000000 + 303 * 4096;
                bool in_second = a >= 0x40000000 + 400 * 4096 && a + size <= 0x40000000 + 777 * 4096;
                ASSERT_TRUE(in_first || in_second) << "block outside the usable ranges";
                auto next = live.lower_bound(a);
                if (next != live.end()) {
                    ASSERT_GE(next->first, a + size) << "overlap with a later block";
                }
                if (next != live.begin()) {
                    auto prev = std::prev(next);
                    ASSERT_LE(prev->first + (4096ull << prev->second), a) << "overlap with an earlier block";
                }
                live[a] = order;
                live_pages += 1ull << order;
            } else {
                auto it = live.begin();
                std::advance(it, rng() % live.size());
                ASSERT_TRUE(f.buddy.free(it->first, it->second).ok());
                live_pages -= 1ull << it->second;
                live.erase(it);
            }
            ASSERT_EQ(f.buddy.stats().free_pages, usable - live_pages);
        }
        for (auto& [a, o] : live)
            ASSERT_TRUE(f.buddy.free(a, o).ok());
        auto s = f.buddy.stats();
        EXPECT_EQ(s.free_pages, usable) << "leak";
        // Fully coalesced: the free blocks are exactly the maximal aligned blocks of each range.
        Fixture g(pages);
        g.buddy.add_free_range(0x40000000 + 3 * 4096, 300 * 4096);
        g.buddy.add_free_range(0x40000000 + 400 * 4096, 377 * 4096);
        auto expect = g.buddy.stats();
        for (unsigned o = 0; o <= mm::BuddyAllocator::kMaxOrder; ++o)
            EXPECT_EQ(s.free_blocks[o], expect.free_blocks[o]) << "seed " << seed << " order " << o;
    }
}

// A second free is refused whatever the first one merged with: with no buddy free, with its
// upper buddy, with its lower buddy (the head of the merged block is then the buddy, and the
// freed page must not still look like an allocated head), and up several orders at once; the
// allocator stays consistent (every page handed out once).
TEST(Buddy, DoubleFreeRefusedForEveryMergeShape) {
    for (unsigned order = 0; order <= 3; ++order) {
        for (int shape = 0; shape < 4; ++shape) {
            Fixture f(64);
            f.buddy.add_free_range(0x40000000, 64 * 4096);
            auto lower = f.buddy.alloc(order);
            auto upper = f.buddy.alloc(order);
            ASSERT_TRUE(lower.ok() && upper.ok());
            ASSERT_EQ(*upper ^ *lower, 4096ull << order) << "buddies";
            uint64_t victim = 0;
            switch (shape) {
            case 0: victim = *lower; break; // upper still held
            case 1: victim = *upper; break; // lower still held
            case 2:
                ASSERT_TRUE(f.buddy.free(*upper, order).ok());
                victim = *lower;
                break; // merges upward
            case 3:
                ASSERT_TRUE(f.buddy.free(*lower, order).ok());
                victim = *upper;
                break; // merges with its lower buddy
            }
            ASSERT_TRUE(f.buddy.free(victim, order).ok());
            EXPECT_FALSE(f.buddy.free(victim, order).ok()) << "order " << order << " shape " << shape;
            // Everything can be taken again exactly once: no page is on two lists.
            uint64_t held = shape < 2 ? (1ull << order) : 0;
            EXPECT_EQ(f.buddy.stats().free_pages, 64u - held);
            std::vector<uint64_t> pages;
            for (auto p = f.buddy.alloc(0); p.ok(); p = f.buddy.alloc(0))
                pages.push_back(*p);
            std::sort(pages.begin(), pages.end());
            EXPECT_EQ(std::adjacent_find(pages.begin(), pages.end()), pages.end()) << "a page handed out twice";
            EXPECT_EQ(pages.size(), 64u - held);
        }
    }
}

// Kernel heap over real (host) memory from the buddy allocator: no overlap, contents intact,
// per-owner accounting and caps, bad and double frees refused, pages returned when empty.
#include <mm/buddy.h>
#include <mm/heap.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <vector>

namespace {

class BuddyPages final : public mm::PageSource {
public:
    explicit BuddyPages(size_t pages) : m_meta(pages) {
        m_mem = static_cast<uint8_t*>(aligned_alloc(4096, pages * 4096));
        auto base = reinterpret_cast<uint64_t>(m_mem);
        EXPECT_TRUE(m_buddy.init(base, pages, m_meta.data(), m_meta.size() * sizeof(mm::PageFrame)).ok());
        m_buddy.add_free_range(base, pages * 4096);
    }
    ~BuddyPages() { ::free(m_mem); }
    ktl::Result<uint64_t> alloc_pages(unsigned order, uint16_t owner) override { return m_buddy.alloc(order, owner); }
    void free_pages(uint64_t addr, unsigned order) override { EXPECT_TRUE(m_buddy.free(addr, order).ok()); }
    mm::BuddyAllocator& buddy() { return m_buddy; }

private:
    uint8_t* m_mem;
    std::vector<mm::PageFrame> m_meta;
    mm::BuddyAllocator m_buddy;
};

} // namespace

TEST(Heap, AlignmentAndRoundTrip) {
    BuddyPages pages(256);
    mm::Heap heap(pages);
    for (size_t size : { 1, 15, 16, 17, 100, 1000, 1008, 1009, 5000, 70000 }) {
        auto p = heap.alloc(size, 1);
        ASSERT_TRUE(p.ok()) << size;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % 16, 0u);
        memset(*p, 0xab, size);
        EXPECT_TRUE(heap.free(*p).ok());
    }
    EXPECT_EQ(heap.used_by(1), 0u);
    EXPECT_EQ(pages.buddy().stats().free_pages, 256u) << "all pages returned";
}

TEST(Heap, RejectsInvalidRequests) {
    BuddyPages pages(16);
    mm::Heap heap(pages);
    EXPECT_EQ(heap.alloc(0, 1).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(heap.alloc(100, mm::Heap::kMaxOwners).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(heap.alloc(1 << 30, 1).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(heap.alloc(1 << 20, 1).error(), ktl::Error::NoMemory) << "more than the 16 pages exist";
    alignas(16) uint8_t not_ours[64] = {};
    EXPECT_FALSE(heap.free(not_ours + 16).ok());
    auto p = heap.alloc(40, 2);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(heap.free(*p).ok());
    EXPECT_FALSE(heap.free(*p).ok()) << "double free must be refused";
}

TEST(Heap, PerOwnerAccountingAndCaps) {
    BuddyPages pages(512);
    mm::Heap heap(pages);
    heap.set_limit(5, 4096);
    std::vector<void*> got;
    for (;;) {
        auto p = heap.alloc(100, 5); // 128-byte slots
        if (!p) {
            EXPECT_EQ(p.error(), ktl::Error::NoMemory);
            break;
        }
        got.push_back(*p);
    }
    EXPECT_EQ(got.size(), 4096u / 128) << "the cap is exact";
    EXPECT_EQ(heap.used_by(5), 4096u);
    EXPECT_TRUE(heap.alloc(100, 6).ok()) << "other owners are unaffected";
    ASSERT_TRUE(heap.free(got.back()).ok());
    got.pop_back();
    EXPECT_TRUE(heap.alloc(100, 5).ok()) << "freeing makes room under the cap";
    EXPECT_EQ(heap.stats().failed, 1u);
}

TEST(Heap, RandomWorkloadKeepsContentsIntact) {
    BuddyPages pages(4096);
    mm::Heap heap(pages);
    std::mt19937 rng(3);
    struct Live {
        size_t size;
        uint8_t fill;
        uint16_t owner;
    };
    std::map<uint8_t*, Live> live;
    uint64_t expected_requested = 0;
    for (int step = 0; step < 20000; ++step) {
        if (live.size() < 500 && (live.empty() || rng() % 2)) {
            size_t size = rng() % 4 == 0 ? 1 + rng() % 20000 : 1 + rng() % 1000;
            uint16_t owner = static_cast<uint16_t>(rng() % 4);
            auto p = heap.alloc(size, owner);
            ASSERT_TRUE(p.ok());
            auto* b = static_cast<uint8_t*>(*p);
            auto next = live.lower_bound(b);
            if (next != live.end()) {
                ASSERT_GE(next->first, b + size);
            }
            if (next != live.begin()) {
                auto prev = std::prev(next);
                ASSERT_LE(prev->first + prev->second.size, b);
            }
            uint8_t fill = static_cast<uint8_t>(rng());
            memset(b, fill, size);
            live[b] = { size, fill, owner };
            expected_requested += size;
        } else {
            auto it = live.begin();
            std::advance(it, rng() % live.size());
            for (size_t i = 0; i < it->second.size; ++i)
                ASSERT_EQ(it->first[i], it->second.fill) << "allocation contents were overwritten";
            ASSERT_TRUE(heap.free(it->first).ok());
            expected_requested -= it->second.size;
            live.erase(it);
        }
        ASSERT_EQ(heap.stats().bytes_requested, expected_requested);
    }
    for (auto& [p, l] : live)
        ASSERT_TRUE(heap.free(p).ok());
    for (uint16_t o = 0; o < 4; ++o)
        EXPECT_EQ(heap.used_by(o), 0u);
    EXPECT_EQ(heap.stats().live_allocations, 0u);
    EXPECT_EQ(pages.buddy().stats().free_pages, 4096u) << "leak: pages not returned";
}

// A dead owner's memory comes back whole: every slab slot and large block it held is freed,
// its charge is zero (a reused id starts clean), and every other owner's memory is untouched.
TEST(Heap, ReleaseOwnerFreesEverythingItHeldAndNothingElse) {
    BuddyPages pages(4096);
    mm::Heap heap(pages);
    std::mt19937 rng(11);
    struct Live {
        size_t size;
        uint8_t fill;
        uint16_t owner;
    };
    std::map<uint8_t*, Live> live;
    for (int i = 0; i < 3000; ++i) {
        size_t size = rng() % 8 == 0 ? 1 + rng() % 30000 : 1 + rng() % 1000;
        auto owner = static_cast<uint16_t>(rng() % 3); // 0 and 1 live on, 2 dies
        auto p = heap.alloc(size, owner);
        ASSERT_TRUE(p.ok());
        auto fill = static_cast<uint8_t>(rng());
        memset(*p, fill, size);
        live[static_cast<uint8_t*>(*p)] = { size, fill, owner };
        if (rng() % 3 == 0) { // churn, so slabs hold both owners and some are partial
            auto it = live.begin();
            std::advance(it, rng() % live.size());
            ASSERT_TRUE(heap.free(it->first).ok());
            live.erase(it);
        }
    }
    heap.set_limit(2, 1 << 30);
    uint64_t charged = heap.used_by(2);
    uint64_t held = 0;
    for (auto& [p, l] : live)
        held += l.owner == 2;
    ASSERT_GT(held, 100u);
    auto released = heap.release_owner(2);
    EXPECT_EQ(released.allocations, held);
    EXPECT_EQ(released.bytes, charged);
    EXPECT_EQ(heap.used_by(2), 0u);
    EXPECT_EQ(heap.stats().live_allocations, live.size() - held);
    EXPECT_EQ(heap.release_owner(2).allocations, 0u) << "nothing left the second time";
    for (auto it = live.begin(); it != live.end();) {
        if (it->second.owner == 2) {
            it = live.erase(it);
            continue;
        }
        for (size_t i = 0; i < it->second.size; ++i)
            ASSERT_EQ(it->first[i], it->second.fill) << "another owner's memory was touched";
        ++it;
    }
    // Limit cleared with the owner; its slots are reusable.
    EXPECT_TRUE(heap.alloc(100, 2).ok());
    for (auto& [p, l] : live)
        ASSERT_TRUE(heap.free(p).ok());
    heap.release_owner(2);
    EXPECT_EQ(heap.stats().live_allocations, 0u);
    EXPECT_EQ(pages.buddy().stats().free_pages, 4096u) << "leak: pages not returned";
}

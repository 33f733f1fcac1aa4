// lib/raft/log_image: the groups' durable state as the kernel keeps it beside the log. Records
// applied give the state replay gives; the stream a checkpoint writes, read back in any windows,
// gives the same images again; a damaged stream is refused; memory comes back.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

#include <raft/log_image.h>

namespace {

using raftlog::Images;
using raftlog::Kind;

struct CountingMemory final : raftlog::Memory {
    long live = 0;
    void* alloc(size_t n) override {
        ++live;
        return std::malloc(n);
    }
    void free(void* p) override {
        --live;
        std::free(p);
    }
};

std::vector<std::byte> term(uint64_t group, uint64_t t, uint64_t vote) {
    std::vector<std::byte> b(raftlog::kTermBytes);
    EXPECT_TRUE(raftlog::encode_term(b, group, t, vote).ok());
    return b;
}

std::vector<std::byte> append(uint64_t group, uint64_t index, uint64_t t,
                              const std::vector<std::vector<std::byte>>& data) {
    std::vector<raftlog::EntryView> views;
    for (const auto& d : data)
        views.push_back({ t, 1, { d.data(), d.size() } });
    std::vector<std::byte> b(raftlog::append_bytes(views));
    EXPECT_TRUE(raftlog::encode_append(b, group, index, views).ok());
    return b;
}

std::vector<std::byte> snapshot(uint64_t group, uint64_t index, uint64_t t, uint32_t trailing, size_t data_bytes) {
    std::vector<std::byte> conf(12, std::byte(0x5c)), data(data_bytes, std::byte(index));
    const raftlog::SnapshotView v { index, t, 1, conf, data };
    std::vector<std::byte> b(raftlog::snapshot_bytes(conf.size(), data.size()));
    EXPECT_TRUE(raftlog::encode_snapshot(b, group, v, trailing).ok());
    return b;
}

std::vector<std::byte> truncate(uint64_t group, uint64_t index) {
    std::vector<std::byte> b(raftlog::kTruncateBytes);
    EXPECT_TRUE(raftlog::encode_truncate(b, group, index).ok());
    return b;
}

std::vector<std::byte> forget(uint64_t group) {
    std::vector<std::byte> b(raftlog::kForgetBytes);
    EXPECT_TRUE(raftlog::encode_forget(b, group).ok());
    return b;
}

// Term, vote and every entry of every group the same.
void expect_same(const Images& a, const Images& b, const std::vector<uint64_t>& groups) {
    for (uint64_t g : groups) {
        const raftlog::Image* x = a.find(g);
        const raftlog::Image* y = b.find(g);
        ASSERT_EQ(x == nullptr || x->empty(), y == nullptr || y->empty()) << "group " << g;
        if (!x || x->empty())
            continue;
        EXPECT_EQ(x->term(), y->term());
        EXPECT_EQ(x->vote(), y->vote());
        ASSERT_EQ(x->start(), y->start()) << "group " << g;
        ASSERT_EQ(x->next_index(), y->next_index()) << "group " << g;
        const auto &s = x->snapshot(), &u = y->snapshot();
        EXPECT_EQ(s.index, u.index);
        EXPECT_EQ(s.term, u.term);
        EXPECT_EQ(s.conf_index, u.conf_index);
        EXPECT_TRUE(std::equal(s.conf.begin(), s.conf.end(), u.conf.begin(), u.conf.end()));
        EXPECT_TRUE(std::equal(s.data.begin(), s.data.end(), u.data.begin(), u.data.end()));
        for (uint64_t i = x->start(); i < x->next_index(); ++i) {
            const auto e = x->entry(i), f = y->entry(i);
            EXPECT_EQ(e.term, f.term);
            EXPECT_EQ(e.type, f.type);
            ASSERT_EQ(e.data.size(), f.data.size());
            EXPECT_TRUE(std::equal(e.data.begin(), e.data.end(), f.data.begin())) << "group " << g << " entry " << i;
        }
    }
}

std::vector<std::byte> stream_of(const Images& images) {
    std::vector<std::byte> s(images.stream_bytes(Images::kAll));
    EXPECT_EQ(images.stream_copy(Images::kAll, s, 0), s.size());
    return s;
}

TEST(RaftImage, RecordsBuildEachGroupsStateAndTheStreamGivesItBack) {
    CountingMemory mem;
    {
        Images images(mem);
        ASSERT_EQ(images.apply(Kind::Term, term(0, 1, 0)), ktl::Error::None);
        ASSERT_EQ(images.apply(Kind::Append, append(0, 1, 1, { { std::byte(7) }, {}, { std::byte(1), std::byte(2) } })),
                  ktl::Error::None);
        ASSERT_EQ(images.apply(Kind::Term, term(5, 3, 2)), ktl::Error::None);
        ASSERT_EQ(images.apply(Kind::Term, term(0, 2, 3)), ktl::Error::None);
        ASSERT_EQ(images.apply(Kind::Truncate, truncate(0, 3)), ktl::Error::None);
        const raftlog::Image* g0 = images.find(0);
        ASSERT_NE(g0, nullptr);
        EXPECT_EQ(g0->term(), 2u);
        EXPECT_EQ(g0->vote(), 3u);
        EXPECT_EQ(g0->next_index(), 3u);
        EXPECT_EQ(images.find(5)->term(), 3u);
        EXPECT_EQ(images.find(5)->entries(), 0u);
        EXPECT_EQ(images.find(9), nullptr);
        // A record no correct member writes is refused, and changes nothing.
        EXPECT_EQ(images.apply(Kind::Append, append(0, 7, 2, { {} })), ktl::Error::Corrupt);
        EXPECT_EQ(images.apply(Kind::Term, term(0, 1, 0)), ktl::Error::Corrupt);
        EXPECT_EQ(g0->next_index(), 3u);

        const auto s = stream_of(images);
        Images back(mem);
        ASSERT_EQ(back.apply_stream(s), ktl::Error::None);
        expect_same(images, back, { 0, 5 });
        // One group's stream alone.
        std::vector<std::byte> only(images.stream_bytes(5));
        ASSERT_EQ(images.stream_copy(5, only, 0), only.size());
        Images five(mem);
        ASSERT_EQ(five.apply_stream(only), ktl::Error::None);
        EXPECT_EQ(five.find(0), nullptr);
        expect_same(images, five, { 5 });
    }
    EXPECT_EQ(mem.live, 0) << "every entry and log array freed";
}

// Random histories of three groups with entries large enough to span several of the stream's
// Appends: the stream, read in random windows (as a checkpoint reads chunks), rebuilds the same
// images; any single flipped byte of the header area, or a stream cut short, is refused.
TEST(RaftImage, TheStreamReadInWindowsRebuildsTheSameImages) {
    CountingMemory mem;
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        std::mt19937_64 rng(seed);
        Images images(mem);
        uint64_t t[3] = { 0, 0, 0 };
        for (int op = 0; op < 80; ++op) {
            const uint64_t g = rng() % 3;
            const uint64_t what = rng() % 12;
            const raftlog::Image* image = images.find(g * 7);
            const uint64_t start = image ? image->start() : 1, end = image ? image->next_index() : 1;
            const uint64_t snap = image ? image->snapshot_index() : 0;
            if (t[g] == 0 || what == 0) {
                t[g] += 1 + rng() % 2;
                ASSERT_EQ(images.apply(Kind::Term, term(g * 7, t[g], rng() % 4)), ktl::Error::None);
            } else if (what == 10 && end > std::max(start, snap + 1)) { // a snapshot taken, entries kept
                const uint64_t lo = std::max(start, snap + 1);
                ASSERT_EQ(images.apply(Kind::Snapshot, snapshot(g * 7, lo + rng() % (end - lo), t[g],
                                                                static_cast<uint32_t>(1 + rng() % 6), rng() % 3000)),
                          ktl::Error::None);
            } else if (what == 11) { // a snapshot installed: the log starts after it
                ASSERT_EQ(images.apply(Kind::Snapshot,
                                       snapshot(g * 7, std::max(snap, start) + rng() % 10, t[g], 0, 64)),
                          ktl::Error::None);
            } else if (what < 9) {
                std::vector<std::vector<std::byte>> batch(1 + rng() % 3);
                for (auto& d : batch) {
                    d.resize(rng() % 3 == 0 ? rng() % 20000 : rng() % 64);
                    for (auto& b : d)
                        b = std::byte(rng());
                }
                ASSERT_EQ(images.apply(Kind::Append, append(g * 7, end, t[g], batch)), ktl::Error::None);
            } else if (end > start) {
                ASSERT_EQ(images.apply(Kind::Truncate, truncate(g * 7, start + rng() % (end - start))),
                          ktl::Error::None);
            }
        }
        const auto whole = stream_of(images);
        std::vector<std::byte> pieced(whole.size());
        for (size_t at = 0; at < pieced.size();) {
            const size_t n = std::min<size_t>(1 + rng() % 70000, pieced.size() - at);
            ASSERT_EQ(images.stream_copy(Images::kAll, { pieced.data() + at, n }, at), n);
            at += n;
        }
        ASSERT_TRUE(whole == pieced) << "seed " << seed;
        Images back(mem);
        ASSERT_EQ(back.apply_stream(pieced), ktl::Error::None) << "seed " << seed;
        expect_same(images, back, { 0, 7, 14 });
        EXPECT_EQ(back.stream_bytes(Images::kAll), whole.size());

        Images cut(mem);
        EXPECT_EQ(cut.apply_stream({ whole.data(), whole.size() - 8 }), ktl::Error::Corrupt) << "seed " << seed;
        auto damaged = whole;
        damaged[1] = std::byte(1); // a header's zero byte
        Images bad(mem);
        EXPECT_EQ(bad.apply_stream(damaged), ktl::Error::Corrupt);
    }
    EXPECT_EQ(mem.live, 0);
}

// A group the node left for good: its image and memory go, its slot takes another group, the
// stream no longer carries it (a checkpoint after it), and the other groups are untouched.
TEST(RaftImage, AForgottenGroupGivesItsSlotBack) {
    CountingMemory mem;
    Images images(mem);
    for (uint64_t g = 0; g < raftlog::kMaxGroups; ++g) {
        ASSERT_EQ(images.apply(Kind::Term, term(g, 1, 0)), ktl::Error::None);
        ASSERT_EQ(images.apply(Kind::Append, append(g, 1, 1, { { std::byte(g) } })), ktl::Error::None);
    }
    ASSERT_EQ(images.apply(Kind::Term, term(40, 1, 0)), ktl::Error::Full);
    const size_t before = images.stream_bytes(Images::kAll);
    const size_t live = mem.live;
    ASSERT_EQ(images.apply(Kind::Forget, forget(3)), ktl::Error::None);
    EXPECT_EQ(images.find(3), nullptr);
    EXPECT_EQ(images.groups(), raftlog::kMaxGroups - 1);
    EXPECT_LT(images.stream_bytes(Images::kAll), before);
    EXPECT_LT(mem.live, live);
    EXPECT_EQ(images.apply(Kind::Forget, forget(3)), ktl::Error::None); // (again: nothing left to drop)
    EXPECT_EQ(images.apply(Kind::Forget, forget(77)), ktl::Error::None);
    ASSERT_EQ(images.apply(Kind::Term, term(40, 1, 0)), ktl::Error::None);
    Images back(mem);
    ASSERT_EQ(back.apply_stream(stream_of(images)), ktl::Error::None);
    EXPECT_EQ(back.find(3), nullptr);
    expect_same(images, back, { 0, 1, 2, 4, 5, 6, 7, 40 });
    // Only its exact size decodes; a member's own state never carries one.
    EXPECT_FALSE(raftlog::decode(Kind::Forget, std::vector<std::byte>(7)).ok());
    EXPECT_FALSE(raftlog::decode(Kind::Forget, std::vector<std::byte>(9)).ok());
    const auto d = raftlog::decode(Kind::Forget, forget(5));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->group, 5u);
}

TEST(RaftImage, ANinthGroupAndAnOverlongLogAreRefused) {
    CountingMemory mem;
    Images images(mem);
    for (uint64_t g = 0; g < raftlog::kMaxGroups; ++g)
        ASSERT_EQ(images.apply(Kind::Term, term(g, 1, 0)), ktl::Error::None);
    EXPECT_EQ(images.apply(Kind::Term, term(99, 1, 0)), ktl::Error::Full);
    for (uint64_t i = 1; i < raftlog::kMaxImageEntries; ++i)
        ASSERT_EQ(images.apply(Kind::Append, append(0, i, 1, { {} })), ktl::Error::None);
    // A record of two entries with room for one keeps neither (the log then still takes the next
    // record at its end, as the member that wrote it expects).
    const uint64_t last = raftlog::kMaxImageEntries;
    EXPECT_EQ(images.apply(Kind::Append, append(0, last, 1, { { std::byte(1) }, { std::byte(2) } })),
              ktl::Error::NoMemory);
    EXPECT_EQ(images.find(0)->next_index(), last);
    ASSERT_EQ(images.apply(Kind::Append, append(0, last, 1, { {} })), ktl::Error::None);
    EXPECT_EQ(images.apply(Kind::Append, append(0, last + 1, 1, { {} })), ktl::Error::NoMemory);
    // A group whose first record is refused takes no slot.
    images.clear();
    EXPECT_EQ(images.apply(Kind::Append, append(3, 5, 1, { {} })), ktl::Error::Corrupt);
    EXPECT_EQ(images.find(3), nullptr);
    EXPECT_EQ(images.groups(), 0u);
    images.clear();
    EXPECT_EQ(mem.live, 0);
}

} // namespace

// Deletion: tombstones never returned, neighbour repair keeps recall, entry re-election,
// compaction and slot reuse.
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "support/hnsw_data.h"
#include "support/hnsw_fixture.h"

using namespace hnsw_test;
using ktl::Error;

namespace {

hnsw::Params params_for(const Dataset& d, size_t capacity) {
    hnsw::Params p;
    p.dim = d.dim;
    p.m = 12;
    p.ef_construction = 100;
    p.max_elements = uint32_t(capacity);
    return p;
}

} // namespace

TEST(HnswDelete, DeletedNeverReturned) {
    Dataset d = make_random(16, 2000, 1);
    hnsw::Params p = params_for(d, 2000);
    p.compact_percent = 100; // keep every tombstone in the graph
    OwnedIndex idx(p);
    ASSERT_TRUE(idx.ok());
    for (size_t i = 0; i < d.size(); ++i)
        ASSERT_TRUE(idx.index.insert(i, { d.row(i), d.dim }).ok());
    std::set<uint64_t> deleted;
    for (size_t i = 0; i < d.size(); i += 3) {
        ASSERT_TRUE(idx.index.remove(i).ok());
        deleted.insert(i);
    }
    EXPECT_EQ(idx.index.remove(0).error(), Error::NotFound);
    EXPECT_EQ(idx.index.stats().deleted, deleted.size());
    EXPECT_FALSE(idx.index.contains(3));
    std::vector<float> v(16);
    EXPECT_EQ(idx.index.get(3, v).error(), Error::NotFound);
    // Querying exactly at deleted vectors, with k large enough to sweep their neighbourhood.
    for (uint64_t id : { 0, 3, 300, 999, 1998 }) {
        auto ids = search_ids(idx.index, d.row(id), 50, 200);
        EXPECT_EQ(ids.size(), 50u);
        for (uint64_t r : ids)
            EXPECT_EQ(deleted.count(r), 0u) << "deleted id " << r << " returned";
    }
    // Deleting everything leaves an empty, searchable, reusable index.
    for (size_t i = 0; i < d.size(); ++i) {
        if (!deleted.count(i)) {
            ASSERT_TRUE(idx.index.remove(i).ok());
        }
    }
    EXPECT_EQ(idx.index.size(), 0u);
    EXPECT_TRUE(search_ids(idx.index, d.row(1), 10, 50).empty());
    EXPECT_EQ(idx.index.stats().levels, 0u);
    ASSERT_TRUE(idx.index.insert(5000, { d.row(7), 16 }).ok()); // compacts: all slots were tombstones... or free
    EXPECT_EQ(search_ids(idx.index, d.row(7), 3, 50), std::vector<uint64_t> { 5000 });
}

TEST(HnswDelete, EntryPointReelected) {
    Dataset d = make_random(8, 500, 2);
    OwnedIndex idx(params_for(d, 500));
    for (size_t i = 0; i < d.size(); ++i)
        ASSERT_TRUE(idx.index.insert(i, { d.row(i), d.dim }).ok());
    // Delete nodes in insertion order: the entry point (a top-level node) goes early on.
    for (size_t i = 0; i < 400; ++i) {
        ASSERT_TRUE(idx.index.remove(i).ok());
        auto ids = search_ids(idx.index, d.row(450), 1, 64);
        ASSERT_EQ(ids.size(), 1u);
        ASSERT_EQ(ids[0], 450u) << "after deleting " << i;
    }
    EXPECT_GE(idx.index.stats().levels, 1u);
}

TEST(HnswDelete, CompactionReusesSlots) {
    Dataset d = make_random(8, 300, 3);
    hnsw::Params p = params_for(d, 200);
    p.compact_percent = 20;
    OwnedIndex idx(p);
    for (size_t i = 0; i < 200; ++i)
        ASSERT_TRUE(idx.index.insert(i, { d.row(i), d.dim }).ok());
    EXPECT_EQ(idx.index.insert(200, { d.row(200), d.dim }).error(), Error::Full);
    // 30 % deleted: compaction runs on its own once past 20 %.
    for (size_t i = 0; i < 60; ++i)
        ASSERT_TRUE(idx.index.remove(i * 3).ok());
    auto s = idx.index.stats();
    EXPECT_GE(s.compactions, 1u);
    EXPECT_EQ(s.count, 140u);
    EXPECT_EQ(s.deleted + s.free_slots, 60u);
    // Every freed slot takes a new vector; the capacity is exactly used again.
    for (size_t i = 200; i < 260; ++i)
        ASSERT_TRUE(idx.index.insert(i, { d.row(i), d.dim }).ok()) << i;
    EXPECT_EQ(idx.index.insert(260, { d.row(260), d.dim }).error(), Error::Full);
    s = idx.index.stats();
    EXPECT_EQ(s.count, 200u);
    EXPECT_EQ(s.deleted, 0u);
    EXPECT_EQ(s.free_slots, 0u);
    // Link blocks are recycled too: bytes used stays bounded over churn.
    const size_t bytes = s.bytes_used;
    std::vector<uint64_t> live;
    for (size_t i = 0; i < 300; ++i)
        if (idx.index.contains(i))
            live.push_back(i);
    uint64_t next_id = 1000;
    for (int round = 0; round < 10; ++round) {
        for (size_t i = 0; i < 50; ++i) {
            ASSERT_TRUE(idx.index.remove(live.front()).ok());
            live.erase(live.begin());
        }
        ASSERT_TRUE(idx.index.compact().ok());
        for (size_t i = 0; i < 50; ++i, ++next_id) {
            ASSERT_TRUE(idx.index.insert(next_id, { d.row(next_id % 300), d.dim }).ok());
            live.push_back(next_id);
        }
    }
    EXPECT_EQ(idx.index.size(), 200u);
    EXPECT_LE(idx.index.stats().bytes_used, bytes + 4 * sizeof(uint32_t) * (p.m + 1) * hnsw::kMaxLevel);
    // All results are live ids.
    for (size_t q = 0; q < 20; ++q)
        for (uint64_t id : search_ids(idx.index, d.row(q), 10, 64))
            EXPECT_TRUE(idx.index.contains(id));
}

// Recall after deleting 20 % of a Fashion-MNIST subset, against brute force over the
// survivors, with repair only (no compaction) and after compaction. ef = 16 is low enough
// that a damaged graph shows (intact: about 0.98 here).
TEST(HnswDelete, RecallHoldsAfter20PercentDeletes) {
    constexpr uint32_t kEf = 16;
    Dataset base = load_fashion_mnist("train", 0, 5000);
    ASSERT_TRUE(base.error.empty()) << base.error;
    Dataset queries = load_fashion_mnist("t10k", 0, 200);
    ASSERT_TRUE(queries.error.empty()) << queries.error;
    hnsw::Params p;
    p.dim = base.dim;
    p.m = 16;
    p.ef_construction = 100;
    p.max_elements = uint32_t(base.size());
    p.compact_percent = 100;
    OwnedIndex idx(p);
    ASSERT_TRUE(idx.ok());
    for (size_t i = 0; i < base.size(); ++i)
        ASSERT_TRUE(idx.index.insert(i, { base.row(i), base.dim }).ok());

    std::mt19937 gen(5);
    std::vector<bool> gone(base.size());
    size_t removed = 0;
    while (removed < base.size() / 5) {
        size_t i = gen() % base.size();
        if (gone[i])
            continue;
        gone[i] = true;
        ++removed;
        ASSERT_TRUE(idx.index.remove(i).ok());
    }
    auto truth = exact_knn(base, queries, 10, hnsw::Metric::L2, &gone);
    auto run = [&] {
        std::vector<std::vector<uint64_t>> found;
        for (size_t q = 0; q < queries.size(); ++q) {
            found.push_back(search_ids(idx.index, queries.row(q), 10, kEf));
            for (uint64_t id : found.back())
                EXPECT_FALSE(gone[id]) << "deleted id " << id << " returned";
        }
        return recall(found, truth);
    };
    double with_tombstones = run();
    ASSERT_TRUE(idx.index.compact().ok());
    EXPECT_EQ(idx.index.stats().deleted, 0u);
    EXPECT_EQ(idx.index.stats().free_slots, removed);
    double compacted = run();
    std::printf("recall@10 at ef=%u after deleting %zu of %zu: %.4f with tombstones, %.4f after compaction\n", kEf,
                removed, base.size(), with_tombstones, compacted);
    EXPECT_GE(with_tombstones, 0.95);
    EXPECT_GE(compacted, 0.95);
    // Reinsert the deleted vectors into the freed slots: recall over the full set again.
    for (size_t i = 0; i < base.size(); ++i) {
        if (gone[i]) {
            ASSERT_TRUE(idx.index.insert(100000 + i, { base.row(i), base.dim }).ok());
        }
    }
    EXPECT_EQ(idx.index.stats().free_slots, 0u);
    auto full_truth = exact_knn(base, queries, 10, hnsw::Metric::L2);
    std::vector<std::vector<uint64_t>> found;
    for (size_t q = 0; q < queries.size(); ++q) {
        auto ids = search_ids(idx.index, queries.row(q), 10, kEf);
        for (auto& id : ids)
            id = id >= 100000 ? id - 100000 : id;
        found.push_back(ids);
    }
    EXPECT_GE(recall(found, full_truth), 0.95);
}

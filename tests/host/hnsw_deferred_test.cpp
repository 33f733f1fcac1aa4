// Deferred linking (Index::upsert_deferred / link_deferred): vectors stored without graph work
// are found at once, replace and are replaced like linked ones, travel in snapshots as deferred,
// and once linked give the graph a linked index would have.
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <hnsw/crc32.h>

#include "support/hnsw_data.h"
#include "support/hnsw_fixture.h"

using namespace hnsw_test;
using ktl::Error;

namespace {

// Rows [0, linked) inserted, rows [linked, n) deferred; ids are row numbers.
void fill(hnsw::Index& index, const Dataset& d, size_t linked) {
    for (size_t i = 0; i < d.size(); ++i) {
        auto r = i < linked ? index.insert(i, { d.row(i), d.dim }, 100 + i)
                            : index.upsert_deferred(i, { d.row(i), d.dim }, 100 + i);
        ASSERT_TRUE(r.ok()) << i << ": " << ktl::error_name(r.error());
    }
}

// Every row's own vector finds itself first.
void expect_each_finds_itself(hnsw::Index& index, const Dataset& d, uint32_t ef) {
    for (size_t i = 0; i < d.size(); ++i) {
        auto ids = search_ids(index, d.row(i), 1, ef);
        ASSERT_EQ(ids.size(), 1u);
        EXPECT_EQ(ids[0], i) << "row " << i;
    }
}

} // namespace

TEST(HnswDeferred, FoundAtOnceCountedAndLinkedLater) {
    const Dataset d = make_random(16, 300, 1);
    OwnedIndex idx(small_params(16, 400));
    ASSERT_TRUE(idx.ok());
    fill(idx.index, d, 200);
    EXPECT_EQ(idx.index.deferred(), 100u);
    EXPECT_EQ(idx.index.size(), 300u);
    EXPECT_EQ(idx.index.stats().deferred, 100u);
    expect_each_finds_itself(idx.index, d, 64);
    EXPECT_EQ(*idx.index.tag_of(250), 350u);
    std::vector<float> out(16);
    ASSERT_TRUE(idx.index.get(299, out).ok());
    EXPECT_EQ(out[3], d.row(299)[3]);
    EXPECT_EQ(idx.index.insert(250, { d.row(0), 16 }).error(), Error::Exists);

    // In slices, oldest first; the count left is the answer.
    EXPECT_EQ(*idx.index.link_deferred(30), 70u);
    EXPECT_EQ(*idx.index.link_deferred(0), 70u);
    expect_each_finds_itself(idx.index, d, 64);
    EXPECT_EQ(*idx.index.link_deferred(1000), 0u);
    EXPECT_EQ(idx.index.stats().deferred, 0u);
    EXPECT_EQ(idx.index.size(), 300u);
    expect_each_finds_itself(idx.index, d, 64);
}

// All deferred (a collection created in the log's tail): searched exhaustively, exact.
TEST(HnswDeferred, AnIndexOfDeferredVectorsOnlyIsExact) {
    const Dataset d = make_random(8, 120, 2);
    const Dataset q = make_random(8, 20, 3);
    for (auto metric : { hnsw::Metric::L2, hnsw::Metric::Cosine }) {
        OwnedIndex idx(small_params(8, 200, metric));
        fill(idx.index, d, 0);
        EXPECT_EQ(idx.index.stats().levels, 0u); // no graph yet
        const auto truth = exact_knn(d, q, 10, metric);
        for (size_t i = 0; i < q.size(); ++i)
            EXPECT_EQ(search_ids(idx.index, q.row(i), 10, 10), truth[i]) << "query " << i;
        // A filter applies to them as to linked ones.
        hnsw::Filter odd { [](uint64_t id, void*) { return id % 2 == 1; }, nullptr };
        for (uint64_t id : search_ids(idx.index, q.row(0), 10, 10, &odd))
            EXPECT_EQ(id % 2, 1u);
        EXPECT_EQ(search_ids(idx.index, q.row(0), 10, 10, &odd).size(), 10u);
    }
}

// Linked later, the graph serves as well as one built by inserts (recall on real-sized data).
TEST(HnswDeferred, LinkedGraphKeepsRecall) {
    const Dataset d = make_random(24, 1500, 4);
    const Dataset q = make_random(24, 50, 5);
    const auto truth = exact_knn(d, q, 10, hnsw::Metric::L2);
    OwnedIndex inserted(small_params(24, 2000)), deferred(small_params(24, 2000));
    fill(inserted.index, d, d.size());
    fill(deferred.index, d, 500);
    while (*deferred.index.link_deferred(64) > 0) {}
    std::vector<std::vector<uint64_t>> a, b;
    for (size_t i = 0; i < q.size(); ++i) {
        a.push_back(search_ids(inserted.index, q.row(i), 10, 64));
        b.push_back(search_ids(deferred.index, q.row(i), 10, 64));
    }
    const double ra = recall(a, truth), rb = recall(b, truth);
    EXPECT_GT(rb, 0.9);
    EXPECT_GT(rb, ra - 0.03) << "inserted " << ra << ", linked later " << rb;
}

TEST(HnswDeferred, ReplacedAndRemovedLikeLinkedOnes) {
    const Dataset d = make_random(8, 60, 6);
    OwnedIndex idx(small_params(8, 100));
    fill(idx.index, d, 30);
    // A deferred id removed from the middle, the head and the tail of the chain.
    for (uint64_t id : { 40u, 30u, 59u })
        ASSERT_TRUE(idx.index.remove(id).ok());
    EXPECT_EQ(idx.index.deferred(), 27u);
    EXPECT_EQ(idx.index.remove(40).error(), Error::NotFound);
    EXPECT_EQ(idx.index.stats().deleted, 0u); // no tombstone: it was never in the graph
    // A linked id replaced by a deferred vector, and a deferred one by a linked vector.
    ASSERT_TRUE(idx.index.upsert_deferred(5, { d.row(50), 8 }, 7).ok());
    ASSERT_TRUE(idx.index.upsert(45, { d.row(1), 8 }).ok());
    EXPECT_EQ(idx.index.deferred(), 27u);
    EXPECT_EQ(idx.index.size(), 57u);
    EXPECT_EQ(*idx.index.tag_of(5), 7u);
    auto near50 = search_ids(idx.index, d.row(50), 2, 32);
    EXPECT_TRUE((near50 == std::vector<uint64_t> { 50, 5 }) || (near50 == std::vector<uint64_t> { 5, 50 }));
    for (uint64_t id : search_ids(idx.index, d.row(40), 60, 64))
        EXPECT_NE(id, 40u);
    EXPECT_EQ(*idx.index.link_deferred(100), 0u);
    for (uint64_t id : search_ids(idx.index, d.row(30), 60, 64)) {
        EXPECT_NE(id, 30u);
        EXPECT_NE(id, 59u);
    }
    EXPECT_EQ(search_ids(idx.index, d.row(2), 1, 32), std::vector<uint64_t> { 2 });
}

TEST(HnswDeferred, FullIndexRefusesAndSlotsAreReused) {
    const Dataset d = make_random(4, 12, 7);
    OwnedIndex idx(small_params(4, 10));
    Dataset first10 = d;
    first10.data.resize(40);
    fill(idx.index, first10, 5);
    EXPECT_EQ(idx.index.upsert_deferred(11, { d.row(11), 4 }).error(), Error::Full);
    ASSERT_TRUE(idx.index.remove(7).ok()); // a deferred slot back to the free queue
    ASSERT_TRUE(idx.index.upsert_deferred(11, { d.row(11), 4 }).ok());
    EXPECT_EQ(idx.index.size(), 10u);
    EXPECT_EQ(*idx.index.link_deferred(100), 0u);
    EXPECT_EQ(search_ids(idx.index, d.row(11), 1, 16), std::vector<uint64_t> { 11 });
}

// Deferred vectors travel in snapshots as deferred (version 3): the same results, the same
// bytes again, and linking goes on after the load; without any the snapshot stays version 2.
TEST(HnswDeferred, SnapshotsCarryThem) {
    const Dataset d = make_random(12, 200, 8);
    const hnsw::Params p = small_params(12, 300);
    OwnedIndex idx(p);
    fill(idx.index, d, 150);
    ASSERT_TRUE(idx.index.remove(160).ok());
    const std::vector<std::byte> bytes = save(idx.index);
    uint32_t version = 0;
    std::memcpy(&version, bytes.data() + 8, 4);
    EXPECT_EQ(version, 3u);

    std::vector<std::byte> memory(hnsw::Index::memory_needed(p));
    auto loaded = hnsw::Index::load(bytes, memory, p.max_elements);
    ASSERT_TRUE(loaded.ok()) << ktl::error_name(loaded.error());
    EXPECT_EQ(loaded->deferred(), 49u);
    EXPECT_EQ(loaded->size(), 199u);
    EXPECT_EQ(save(*loaded), bytes);
    for (size_t i = 0; i < d.size(); i += 7)
        EXPECT_EQ(search_ids(*loaded, d.row(i), 3, 32), search_ids(idx.index, d.row(i), 3, 32)) << "row " << i;
    // Linked in both, in the same order: the same graph, byte for byte.
    EXPECT_EQ(*loaded->link_deferred(1000), 0u);
    EXPECT_EQ(*idx.index.link_deferred(1000), 0u);
    const std::vector<std::byte> linked = save(idx.index);
    EXPECT_EQ(save(*loaded), linked);
    std::memcpy(&version, linked.data() + 8, 4);
    EXPECT_EQ(version, 2u);
    // Pages of a snapshot with deferred vectors are its slices too.
    OwnedIndex again(p);
    fill(again.index, d, 100);
    const std::vector<std::byte> whole = save(again.index);
    std::vector<std::byte> paged;
    std::vector<std::byte> page(1000);
    for (uint64_t off = 0; off < whole.size(); off += page.size()) {
        auto n = again.index.save_range(off, page);
        ASSERT_TRUE(n.ok());
        paged.insert(paged.end(), page.begin(), page.begin() + static_cast<long>(*n));
    }
    EXPECT_EQ(paged, whole);
}

// A snapshot that names a deferred node as a link target, or gives one links or a level, is refused.
TEST(HnswDeferred, MalformedDeferredNodesRefused) {
    const Dataset d = make_random(4, 6, 9);
    const hnsw::Params p = small_params(4, 8);
    OwnedIndex idx(p);
    fill(idx.index, d, 5); // slot 5 deferred
    std::vector<std::byte> bytes = save(idx.index);
    std::vector<std::byte> memory(hnsw::Index::memory_needed(p));
    ASSERT_TRUE(hnsw::Index::load(bytes, memory, p.max_elements).ok());
    // A version-2 snapshot may not hold one.
    {
        std::vector<std::byte> v2 = bytes;
        const uint32_t two = 2;
        std::memcpy(v2.data() + 8, &two, 4);
        const uint32_t crc = hnsw::crc32(0, reinterpret_cast<const uint8_t*>(v2.data()), 112);
        std::memcpy(v2.data() + 112, &crc, 4);
        EXPECT_EQ(hnsw::Index::load(v2, memory, p.max_elements).error(), Error::Corrupt);
    }
    for (size_t len = 0; len < bytes.size(); ++len) {
        const Error e = hnsw::Index::load(std::span<const std::byte>(bytes).first(len), memory, p.max_elements).error();
        ASSERT_TRUE(e == Error::Truncated || e == Error::Corrupt) << "length " << len << ": " << ktl::error_name(e);
    }
    for (size_t at = 0; at < bytes.size(); ++at) {
        std::vector<std::byte> bad = bytes;
        bad[at] ^= std::byte { 0x80 };
        ASSERT_NE(hnsw::Index::load(bad, memory, p.max_elements).error(), Error::None) << "flip at " << at;
    }
}

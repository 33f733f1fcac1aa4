// Index behaviour on small synthetic data: parameters, insert/search/get, exactness on tiny
// sets, fewer-than-k results, filters, memory budget, determinism, batches.
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "support/hnsw_data.h"
#include "support/hnsw_fixture.h"

using namespace hnsw_test;
using ktl::Error;

namespace {

void insert_all(hnsw::Index& index, const Dataset& d, uint64_t id_base = 0) {
    for (size_t i = 0; i < d.size(); ++i) {
        auto r = index.insert(id_base + i, { d.row(i), d.dim });
        ASSERT_TRUE(r.ok()) << i << ": " << ktl::error_name(r.error());
    }
}

} // namespace

TEST(HnswParams, Validation) {
    hnsw::Params ok = small_params(16, 100);
    EXPECT_TRUE(ok.validate().ok());
    auto bad = [&](auto mutate) {
        hnsw::Params p = ok;
        mutate(p);
        std::vector<std::byte> mem(1 << 20);
        auto r = hnsw::Index::create(p, mem);
        return !p.validate().ok() && r.error() == Error::InvalidArgs;
    };
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.dim = 0; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.dim = hnsw::kMaxDim + 1; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.m = 1; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.m = hnsw::kMaxM + 1; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.ef_construction = 0; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.ef_construction = hnsw::kMaxEf + 1; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.max_ef = 0; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.max_ef = hnsw::kMaxEf + 1; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.max_elements = 0; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.max_elements = hnsw::kMaxElements + 1; }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.metric = hnsw::Metric(7); }));
    EXPECT_TRUE(bad([](hnsw::Params& p) { p.compact_percent = 101; }));

    hnsw::Params big = ok;
    big.dim = hnsw::kMaxDim;
    big.m = hnsw::kMaxM;
    big.ef_construction = hnsw::kMaxEf;
    big.max_ef = hnsw::kMaxEf;
    EXPECT_TRUE(big.validate().ok());
    OwnedIndex idx(big);
    ASSERT_TRUE(idx.ok());
    std::vector<float> v(hnsw::kMaxDim, 0.5f);
    EXPECT_TRUE(idx.index.insert(1, v).ok());
    EXPECT_EQ(search_ids(idx.index, v.data(), 1, hnsw::kMaxEf), std::vector<uint64_t> { 1 });

    // Memory below the fixed part is refused cleanly.
    std::vector<std::byte> tiny(hnsw::Index::memory_fixed(ok) / 2);
    EXPECT_EQ(hnsw::Index::create(ok, tiny).error(), Error::NoMemory);
}

TEST(HnswIndex, SearchArgumentsValidated) {
    OwnedIndex idx(small_params(4, 10));
    ASSERT_TRUE(idx.ok());
    const float v[4] = { 1, 2, 3, 4 };
    ASSERT_TRUE(idx.index.insert(7, v).ok());
    std::vector<hnsw::Hit> out(8);
    auto& ix = idx.index;
    EXPECT_EQ(ix.search({ v, 3 }, 1, 10, out).error(), Error::InvalidArgs);  // wrong dim
    EXPECT_EQ(ix.search({ v, 4 }, 0, 10, out).error(), Error::InvalidArgs);  // k = 0
    EXPECT_EQ(ix.search({ v, 4 }, 9, 10, out).error(), Error::InvalidArgs);  // out too small
    EXPECT_EQ(ix.search({ v, 4 }, 1, 257, out).error(), Error::InvalidArgs); // ef > max_ef
    const float nan[4] = { 1, NAN, 3, 4 }, inf[4] = { INFINITY, 0, 0, 0 };
    EXPECT_EQ(ix.search({ nan, 4 }, 1, 10, out).error(), Error::InvalidArgs);
    EXPECT_EQ(ix.insert(8, { inf, 4 }).error(), Error::InvalidArgs);
    EXPECT_EQ(ix.insert(8, { v, 3 }).error(), Error::InvalidArgs);
    EXPECT_EQ(ix.insert(7, { v, 4 }).error(), Error::Exists);
    hnsw::Filter no_fn;
    EXPECT_EQ(ix.search({ v, 4 }, 1, 10, out, &no_fn).error(), Error::InvalidArgs);
    hnsw::Index empty;
    EXPECT_EQ(empty.insert(1, { v, 4 }).error(), Error::BadHandle);
    EXPECT_EQ(empty.remove(1).error(), Error::BadHandle);
    EXPECT_EQ(empty.search({ v, 4 }, 1, 10, out).error(), Error::BadHandle);
    EXPECT_FALSE(empty.contains(1));
    EXPECT_EQ(empty.snapshot_size(), 0u);
}

TEST(HnswIndex, ExactOnSmallSetAndGet) {
    for (hnsw::Metric metric : { hnsw::Metric::L2, hnsw::Metric::Cosine, hnsw::Metric::InnerProduct }) {
        Dataset base = make_random(24, 300, 1), queries = make_random(24, 30, 2);
        OwnedIndex idx(small_params(24, 300, metric));
        ASSERT_TRUE(idx.ok());
        insert_all(idx.index, base);
        EXPECT_EQ(idx.index.size(), 300u);
        auto truth = exact_knn(base, queries, 10, metric);
        std::vector<std::vector<uint64_t>> found;
        for (size_t q = 0; q < queries.size(); ++q)
            found.push_back(search_ids(idx.index, queries.row(q), 10, 256));
        // ef = 256 on 300 points explores nearly everything.
        EXPECT_GE(recall(found, truth), 0.99) << int(metric);

        // Results come sorted by distance and match the kernel's distance.
        std::vector<hnsw::Hit> hits(10);
        auto n = idx.index.search({ queries.row(0), 24 }, 10, 64, hits);
        ASSERT_TRUE(n.ok());
        ASSERT_EQ(*n, 10u);
        for (size_t i = 1; i < *n; ++i)
            EXPECT_LE(hits[i - 1].distance, hits[i].distance);

        std::vector<float> got(24);
        ASSERT_TRUE(idx.index.get(5, got).ok());
        if (metric == hnsw::Metric::Cosine) {
            float n2 = hnsw::dot_scalar(got.data(), got.data(), 24);
            EXPECT_NEAR(n2, 1.0f, 1e-5f);
        } else {
            EXPECT_EQ(std::vector<float>(base.row(5), base.row(5) + 24), got);
        }
        EXPECT_EQ(idx.index.get(999, got).error(), Error::NotFound);
        std::vector<float> wrong(3);
        EXPECT_EQ(idx.index.get(5, wrong).error(), Error::InvalidArgs);
        // A stored vector is its own nearest neighbour.
        std::vector<float> self(base.row(42), base.row(42) + 24);
        EXPECT_EQ(search_ids(idx.index, self.data(), 1, 64).front(), 42u);
    }
}

TEST(HnswIndex, FewerThanKReturnedWithCount) {
    OwnedIndex idx(small_params(8, 50));
    ASSERT_TRUE(idx.ok());
    std::vector<hnsw::Hit> out(10);
    const float q[8] = {};
    auto r = idx.index.search({ q, 8 }, 10, 20, out);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, 0u);
    Dataset d = make_random(8, 3, 5);
    insert_all(idx.index, d);
    r = idx.index.search({ q, 8 }, 10, 20, out);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, 3u);
    std::set<uint64_t> ids;
    for (size_t i = 0; i < *r; ++i)
        ids.insert(out[i].id);
    EXPECT_EQ(ids, (std::set<uint64_t> { 0, 1, 2 }));
}

TEST(HnswIndex, FilterRestrictsResults) {
    Dataset base = make_random(16, 1000, 3), queries = make_random(16, 20, 4);
    OwnedIndex idx(small_params(16, 1000));
    ASSERT_TRUE(idx.ok());
    insert_all(idx.index, base);
    hnsw::Filter even { [](uint64_t id, void*) { return id % 2 == 0; }, nullptr };
    std::vector<bool> odd(base.size());
    for (size_t i = 0; i < odd.size(); ++i)
        odd[i] = i % 2 == 1;
    auto truth = exact_knn(base, queries, 10, hnsw::Metric::L2, &odd);
    std::vector<std::vector<uint64_t>> found;
    for (size_t q = 0; q < queries.size(); ++q) {
        found.push_back(search_ids(idx.index, queries.row(q), 10, 128, &even));
        EXPECT_EQ(found.back().size(), 10u);
        for (uint64_t id : found.back())
            EXPECT_EQ(id % 2, 0u);
    }
    EXPECT_GE(recall(found, truth), 0.95);

    // A filter matching a single id still finds it (the graph is traversed through others).
    uint64_t target = 777;
    hnsw::Filter only { [](uint64_t id, void* ctx) { return id == *static_cast<uint64_t*>(ctx); }, &target };
    auto ids = search_ids(idx.index, queries.row(0), 5, 256, &only);
    EXPECT_EQ(ids, std::vector<uint64_t> { 777 });
}

TEST(HnswIndex, FullBudgetIsCleanAndIndexStaysSearchable) {
    // Slot budget: max_elements nodes, then Full.
    Dataset d = make_random(8, 101, 9);
    OwnedIndex idx(small_params(8, 100));
    ASSERT_TRUE(idx.ok());
    insert_all(idx.index, Dataset { 8, std::vector<float>(d.data.begin(), d.data.begin() + 800), {} });
    EXPECT_EQ(idx.index.insert(100, { d.row(100), 8 }).error(), Error::Full);
    EXPECT_EQ(idx.index.size(), 100u);
    EXPECT_EQ(search_ids(idx.index, d.row(17), 1, 32), std::vector<uint64_t> { 17 });

    // Byte budget: memory for the fixed part only, so the first node above level 0 cannot
    // get its link block: NoMemory, nothing changes, level-0 nodes keep going in.
    hnsw::Params p = small_params(8, 2000);
    p.m = 2; // half of the nodes go above level 0
    OwnedIndex tight(p, hnsw::Index::memory_fixed(p));
    ASSERT_TRUE(tight.ok());
    Dataset many = make_random(8, 2000, 10);
    size_t inserted = 0, no_memory = 0;
    for (size_t i = 0; i < many.size(); ++i) {
        auto before = tight.index.stats();
        auto r = tight.index.insert(i, { many.row(i), 8 });
        if (r.ok()) {
            ++inserted;
            continue;
        }
        ASSERT_EQ(r.error(), Error::NoMemory);
        ++no_memory;
        auto after = tight.index.stats();
        EXPECT_EQ(before.count, after.count);
        EXPECT_EQ(before.bytes_used, after.bytes_used);
        EXPECT_FALSE(tight.index.contains(i));
    }
    EXPECT_GT(no_memory, 0u);
    EXPECT_GT(inserted, 0u);
    EXPECT_EQ(tight.index.size(), inserted);
    auto s = tight.index.stats();
    EXPECT_LE(s.bytes_used, s.bytes_budget);
    std::vector<hnsw::Hit> out(5);
    EXPECT_TRUE(tight.index.search({ many.row(0), 8 }, 5, 50, out).ok());
}

TEST(HnswIndex, DeterministicGraph) {
    Dataset d = make_random(32, 2000, 21);
    hnsw::Params p = small_params(32, 2000);
    OwnedIndex a(p), b(p);
    ASSERT_TRUE(a.ok() && b.ok());
    insert_all(a.index, d);
    insert_all(b.index, d);
    EXPECT_EQ(save(a.index), save(b.index));
    // A different seed gives a different graph.
    p.seed = 12345;
    OwnedIndex c(p);
    insert_all(c.index, d);
    EXPECT_NE(save(a.index), save(c.index));
}

TEST(HnswIndex, BatchInsertProgressAndCancel) {
    Dataset d = make_random(8, 100, 31);
    std::vector<uint64_t> ids(100);
    for (size_t i = 0; i < ids.size(); ++i)
        ids[i] = 1000 + i;
    OwnedIndex idx(small_params(8, 200));
    ASSERT_TRUE(idx.ok());
    struct Ctx {
        size_t calls = 0;
        size_t stop_at = 60;
    } ctx;
    hnsw::Progress progress { [](size_t done, size_t, void* c) {
                                 auto* x = static_cast<Ctx*>(c);
                                 ++x->calls;
                                 return done < x->stop_at;
                             },
                              &ctx, 20 };
    auto r = idx.index.insert_batch(ids, d.data, &progress);
    EXPECT_EQ(r.error, Error::None);
    EXPECT_TRUE(r.cancelled);
    EXPECT_EQ(r.inserted, 60u);
    EXPECT_EQ(ctx.calls, 3u);
    // Mismatched sizes, then a duplicate id part-way.
    EXPECT_EQ(idx.index.insert_batch(ids, std::span<const float>(d.data).first(10)).error, Error::InvalidArgs);
    auto rest = idx.index.insert_batch(std::span<const uint64_t>(ids).subspan(50),
                                       std::span<const float>(d.data).subspan(400));
    EXPECT_EQ(rest.error, Error::Exists);
    EXPECT_EQ(rest.inserted, 0u);
    rest = idx.index.insert_batch(std::span<const uint64_t>(ids).subspan(60),
                                  std::span<const float>(d.data).subspan(480));
    EXPECT_EQ(rest.error, Error::None);
    EXPECT_EQ(rest.inserted, 40u);
    EXPECT_EQ(idx.index.size(), 100u);
}

TEST(HnswIndex, UpsertReplacesVector) {
    OwnedIndex idx(small_params(4, 10));
    ASSERT_TRUE(idx.ok());
    const float a[4] = { 1, 0, 0, 0 }, b[4] = { 0, 0, 0, 5 };
    ASSERT_TRUE(idx.index.upsert(3, a).ok());
    ASSERT_TRUE(idx.index.upsert(3, b).ok());
    EXPECT_EQ(idx.index.size(), 1u);
    std::vector<float> got(4);
    ASSERT_TRUE(idx.index.get(3, got).ok());
    EXPECT_EQ(got, std::vector<float>(b, b + 4));
}

TEST(HnswIndex, ConcurrentScratchMatchesInternal) {
    Dataset d = make_random(16, 500, 41);
    hnsw::Params p = small_params(16, 500);
    OwnedIndex idx(p);
    insert_all(idx.index, d);
    std::vector<std::byte> mem(hnsw::Index::scratch_bytes(p));
    auto s = idx.index.make_scratch(mem);
    ASSERT_TRUE(s.ok());
    std::vector<std::byte> small(64);
    EXPECT_EQ(idx.index.make_scratch(small).error(), Error::NoMemory);
    std::vector<hnsw::Hit> a(10), b(10);
    for (size_t q = 0; q < 20; ++q) {
        auto ra = idx.index.search({ d.row(q), 16 }, 10, 40, a);
        auto rb = static_cast<const hnsw::Index&>(idx.index).search(*s, { d.row(q), 16 }, 10, 40, b);
        ASSERT_TRUE(ra.ok() && rb.ok());
        ASSERT_EQ(*ra, *rb);
        for (size_t i = 0; i < *ra; ++i)
            EXPECT_EQ(a[i].id, b[i].id);
    }
    EXPECT_GT(s->distance_computations(), 0u);
    // A scratch carved for another shape of index is refused, not overrun.
    hnsw::Params other = p;
    other.dim = 8;
    std::vector<std::byte> other_mem(hnsw::Index::scratch_bytes(other));
    OwnedIndex narrow(other);
    auto wrong = narrow.index.make_scratch(other_mem);
    ASSERT_TRUE(wrong.ok());
    EXPECT_EQ(static_cast<const hnsw::Index&>(idx.index).search(*wrong, { d.row(0), 16 }, 10, 40, a).error(),
              Error::BadHandle);
}

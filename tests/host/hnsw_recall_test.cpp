// Recall@10 of the HNSW index against exact brute force on real data:
//  - Fashion-MNIST (L2): 10,000 train images as base, 200 t10k images as queries.
//  - GloVe 100-d (cosine): the 10,000 most frequent words as base, 200 held-out words
//    (ranks 20,000-20,199, never inserted) as queries.
#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "support/hnsw_data.h"
#include "support/hnsw_fixture.h"

using namespace hnsw_test;

namespace {

constexpr uint32_t kK = 10;

struct RecallCase {
    const Dataset& base;
    const Dataset& queries;
    hnsw::Metric metric;
    uint32_t ef;
};

double measure(const RecallCase& c, hnsw::Params p) {
    p.dim = c.base.dim;
    p.metric = c.metric;
    p.max_elements = uint32_t(c.base.size());
    OwnedIndex idx(p);
    EXPECT_TRUE(idx.ok());
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < c.base.size(); ++i) {
        auto r = idx.index.insert(i, { c.base.row(i), c.base.dim });
        EXPECT_TRUE(r.ok()) << ktl::error_name(r.error());
    }
    auto t1 = std::chrono::steady_clock::now();
    auto truth = exact_knn(c.base, c.queries, kK, c.metric);
    std::printf("M=%u, ef_construction=%u, %zu base, %zu queries, build %.2fs, %s kernels\n", p.m, p.ef_construction,
                c.base.size(), c.queries.size(), std::chrono::duration<double>(t1 - t0).count(),
                hnsw::isa_name(idx.index.isa()));
    double stated = 0;
    for (uint32_t ef : { 10u, 16u, 24u, 32u, 48u, 64u, 128u }) {
        std::vector<std::vector<uint64_t>> found;
        for (size_t q = 0; q < c.queries.size(); ++q)
            found.push_back(search_ids(idx.index, c.queries.row(q), kK, ef));
        double r = recall(found, truth);
        std::printf("  ef=%-4u recall@10 = %.4f%s\n", ef, r, ef == c.ef ? "  <- asserted >= 0.95" : "");
        if (ef == c.ef)
            stated = r;
    }
    return stated;
}

} // namespace

TEST(HnswRecall, FashionMnistL2) {
    Dataset base = load_fashion_mnist("train", 0, 10000);
    ASSERT_TRUE(base.error.empty()) << base.error;
    Dataset queries = load_fashion_mnist("t10k", 0, 200);
    ASSERT_TRUE(queries.error.empty()) << queries.error;
    hnsw::Params p;
    p.m = 16;
    p.ef_construction = 100;
    EXPECT_GE(measure({ base, queries, hnsw::Metric::L2, 16 }, p), 0.95);
}

TEST(HnswRecall, GloveCosineHeldOut) {
    Dataset base = load_glove(0, 10000);
    ASSERT_TRUE(base.error.empty()) << base.error;
    Dataset queries = load_glove(20000, 200);
    ASSERT_TRUE(queries.error.empty()) << queries.error;
    hnsw::Params p;
    p.m = 16;
    p.ef_construction = 100;
    EXPECT_GE(measure({ base, queries, hnsw::Metric::Cosine, 48 }, p), 0.95);
}

#pragma once
// Test-side owner of an index and its memory.
#include <cstddef>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include <hnsw/index.h>

#include "hnsw_data.h"

namespace hnsw_test {

struct OwnedIndex {
    std::unique_ptr<std::byte[]> memory;
    size_t bytes = 0;
    hnsw::Index index;
    ktl::Error error = ktl::Error::None;

    explicit OwnedIndex(const hnsw::Params& p, size_t budget = 0) {
        bytes = budget ? budget : hnsw::Index::memory_needed(p);
        memory = std::make_unique<std::byte[]>(bytes);
        auto r = hnsw::Index::create(p, { memory.get(), bytes });
        error = r.error();
        if (r.ok())
            index = static_cast<hnsw::Index&&>(*r);
    }
    bool ok() const { return error == ktl::Error::None; }
};

inline std::vector<std::byte> save(const hnsw::Index& index) {
    std::vector<std::byte> out(index.snapshot_size());
    auto r = index.save(out);
    EXPECT_TRUE(r.ok()) << ktl::error_name(r.error());
    EXPECT_EQ(*r, out.size());
    return out;
}

// n rows of uniform values in [-1, 1), the same for the same seed.
inline Dataset make_random(uint32_t dim, size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    Dataset d;
    d.dim = dim;
    d.data.resize(dim * n);
    for (auto& x : d.data)
        x = u(gen);
    return d;
}

// A small index's parameters: M 8, ef_construction 64, max_ef 256.
inline hnsw::Params small_params(uint32_t dim, uint32_t max_elements, hnsw::Metric metric = hnsw::Metric::L2) {
    hnsw::Params p;
    p.dim = dim;
    p.metric = metric;
    p.m = 8;
    p.ef_construction = 64;
    p.max_ef = 256;
    p.max_elements = max_elements;
    return p;
}

// Ids of a search, or an empty list on error.
inline std::vector<uint64_t> search_ids(hnsw::Index& index, const float* q, uint32_t k, uint32_t ef,
                                        const hnsw::Filter* filter = nullptr) {
    std::vector<hnsw::Hit> hits(k);
    auto r = index.search({ q, index.params().dim }, k, ef, hits, filter);
    EXPECT_TRUE(r.ok()) << ktl::error_name(r.error());
    std::vector<uint64_t> ids;
    for (size_t i = 0; r.ok() && i < *r; ++i)
        ids.push_back(hits[i].id);
    return ids;
}

} // namespace hnsw_test

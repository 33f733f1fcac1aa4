// Basalt HNSW vs hnswlib, side by side in one process, single thread: build time, bytes per
// vector, and an ef sweep of recall@10 vs queries/s on Fashion-MNIST (L2) and GloVe-100
// (cosine, held-out queries). Same M, ef_construction and insertion order for both.
//
//   hnsw_bench [--fashion N] [--glove N] [--queries Q] [--m M] [--efc EF] [--reps R]
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <hnswlib/hnswlib.h>

#include "support/hnsw_data.h"

#include <hnsw/index.h>

using namespace hnsw_test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t kK = 10;
const uint32_t kEfs[] = { 10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024 };
int g_reps = 3; // each sweep point is timed this many times; the fastest pass counts

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

size_t heap_in_use() {
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

struct Point {
    uint32_t ef;
    double recall;
    double qps;
};

struct Run {
    const char* name = "";
    double build_s = 0;
    double bytes_per_vector = 0;
    std::vector<Point> sweep;
};

// Queries/s at the given recall, interpolated between the two sweep points around it.
double qps_at(const Run& r, double target) {
    for (size_t i = 0; i < r.sweep.size(); ++i) {
        if (r.sweep[i].recall < target)
            continue;
        if (i == 0)
            return r.sweep[0].qps;
        const Point& a = r.sweep[i - 1];
        const Point& b = r.sweep[i];
        double t = (target - a.recall) / (b.recall - a.recall);
        return std::exp(std::log(a.qps) + t * (std::log(b.qps) - std::log(a.qps)));
    }
    return 0;
}

void normalise(Dataset& d) {
    for (size_t r = 0; r < d.size(); ++r) {
        float* x = d.data.data() + r * d.dim;
        float n2 = hnsw::dot_scalar(x, x, d.dim);
        float inv = n2 > 0 ? 1.0f / std::sqrt(n2) : 0.0f;
        for (uint32_t i = 0; i < d.dim; ++i)
            x[i] *= inv;
    }
}

Run run_basalt(const Dataset& base, const Dataset& queries, const std::vector<std::vector<uint64_t>>& truth,
               hnsw::Metric metric, uint32_t m, uint32_t efc) {
    Run run;
    run.name = "basalt";
    hnsw::Params p;
    p.dim = base.dim;
    p.metric = metric;
    p.m = m;
    p.ef_construction = efc;
    p.max_ef = 1024;
    p.max_elements = uint32_t(base.size());
    const size_t budget = hnsw::Index::memory_needed(p);
    auto memory = std::make_unique<std::byte[]>(budget);
    auto created = hnsw::Index::create(p, { memory.get(), budget });
    if (!created.ok()) {
        std::fprintf(stderr, "create: %s\n", ktl::error_name(created.error()));
        std::exit(1);
    }
    hnsw::Index index = static_cast<hnsw::Index&&>(*created);
    auto t0 = Clock::now();
    for (size_t i = 0; i < base.size(); ++i)
        if (!index.insert(i, { base.row(i), base.dim }).ok())
            std::exit(1);
    run.build_s = seconds_since(t0);
    run.bytes_per_vector = double(index.stats().bytes_used) / double(base.size());

    std::vector<hnsw::Hit> hits(kK);
    for (uint32_t ef : kEfs) {
        std::vector<std::vector<uint64_t>> found;
        double s = 1e30;
        for (int rep = 0; rep < g_reps; ++rep) {
            found.assign(queries.size(), {});
            auto t1 = Clock::now();
            for (size_t q = 0; q < queries.size(); ++q) {
                auto n = index.search({ queries.row(q), queries.dim }, kK, ef, hits);
                for (size_t i = 0; i < *n; ++i)
                    found[q].push_back(hits[i].id);
            }
            s = std::min(s, seconds_since(t1));
        }
        run.sweep.push_back({ ef, recall(found, truth), double(queries.size()) / s });
    }
    return run;
}

Run run_hnswlib(const Dataset& base, const Dataset& queries, const std::vector<std::vector<uint64_t>>& truth,
                hnsw::Metric metric, uint32_t m, uint32_t efc) {
    Run run;
    run.name = "hnswlib";
    // hnswlib has no cosine space: normalised vectors with inner product, as its docs advise.
    Dataset b = base, q = queries;
    if (metric == hnsw::Metric::Cosine) {
        normalise(b);
        normalise(q);
    }
    const size_t heap0 = heap_in_use();
    std::unique_ptr<hnswlib::SpaceInterface<float>> space;
    if (metric == hnsw::Metric::L2)
        space = std::make_unique<hnswlib::L2Space>(b.dim);
    else
        space = std::make_unique<hnswlib::InnerProductSpace>(b.dim);
    auto alg = std::make_unique<hnswlib::HierarchicalNSW<float>>(space.get(), b.size(), m, efc, 100);
    auto t0 = Clock::now();
    for (size_t i = 0; i < b.size(); ++i)
        alg->addPoint(b.row(i), i);
    run.build_s = seconds_since(t0);
    run.bytes_per_vector = double(heap_in_use() - heap0) / double(b.size());

    for (uint32_t ef : kEfs) {
        alg->setEf(ef);
        std::vector<std::vector<uint64_t>> found;
        double s = 1e30;
        for (int rep = 0; rep < g_reps; ++rep) {
            found.assign(q.size(), {});
            auto t1 = Clock::now();
            for (size_t i = 0; i < q.size(); ++i) {
                auto res = alg->searchKnn(q.row(i), kK);
                while (!res.empty()) {
                    found[i].push_back(res.top().second);
                    res.pop();
                }
            }
            s = std::min(s, seconds_since(t1));
        }
        run.sweep.push_back({ ef, recall(found, truth), double(q.size()) / s });
    }
    return run;
}

void report(const char* dataset, const Dataset& base, const Dataset& queries, hnsw::Metric metric, uint32_t m,
            uint32_t efc) {
    std::printf("\n== %s: %zu x %u base, %zu queries, k=%u, M=%u, ef_construction=%u ==\n", dataset, base.size(),
                base.dim, queries.size(), kK, m, efc);
    auto t0 = Clock::now();
    auto truth = exact_knn(base, queries, kK, metric);
    std::printf("exact ground truth: %.1fs\n", seconds_since(t0));
    Run ours = run_basalt(base, queries, truth, metric, m, efc);
    Run theirs = run_hnswlib(base, queries, truth, metric, m, efc);
    std::printf("%-8s build %7.2fs  %8.0f bytes/vector  (%s kernels)\n", ours.name, ours.build_s, ours.bytes_per_vector,
                hnsw::isa_name(hnsw::best_kernels().isa));
    std::printf("%-8s build %7.2fs  %8.0f bytes/vector\n", theirs.name, theirs.build_s, theirs.bytes_per_vector);
    std::printf("  ef | basalt recall      q/s | hnswlib recall      q/s | q/s ratio\n");
    for (size_t i = 0; i < ours.sweep.size(); ++i) {
        const Point& a = ours.sweep[i];
        const Point& b = theirs.sweep[i];
        std::printf("%4u | %13.4f %8.0f | %14.4f %8.0f | %6.2fx\n", a.ef, a.recall, a.qps, b.recall, b.qps,
                    a.qps / b.qps);
    }
    for (double target : { 0.90, 0.95, 0.99 }) {
        double qa = qps_at(ours, target), qb = qps_at(theirs, target);
        std::printf("at recall %.2f: basalt %8.0f q/s, hnswlib %8.0f q/s -> %.2fx\n", target, qa, qb,
                    qb > 0 ? qa / qb : 0.0);
    }
}

} // namespace

int main(int argc, char** argv) {
    size_t fashion_n = 60000, glove_n = 100000, queries_n = 1000;
    uint32_t m = 16, efc = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        size_t v = std::strtoull(argv[i + 1], nullptr, 10);
        if (a == "--fashion")
            fashion_n = v;
        else if (a == "--glove")
            glove_n = v;
        else if (a == "--queries")
            queries_n = v;
        else if (a == "--m")
            m = uint32_t(v);
        else if (a == "--efc")
            efc = uint32_t(v);
        else if (a == "--reps")
            g_reps = int(v ? v : 1);
    }
    std::printf(
        "single thread; q/s = best of %d passes over the queries; bytes/vector: basalt = arena bytes in use / n, "
        "hnswlib = heap growth while building / n\n",
        g_reps);
    if (fashion_n) {
        Dataset base = load_fashion_mnist("train", 0, fashion_n);
        Dataset queries = load_fashion_mnist("t10k", 0, queries_n);
        if (!base.error.empty() || !queries.error.empty()) {
            std::fprintf(stderr, "%s%s\n", base.error.c_str(), queries.error.c_str());
            return 1;
        }
        report("fashion-mnist (L2)", base, queries, hnsw::Metric::L2, m, efc);
    }
    if (glove_n) {
        // Held-out queries: every 100th word from rank 200,000 on, never inserted.
        Dataset base = load_glove(0, glove_n);
        Dataset pool = load_glove(200000, queries_n * 100);
        if (!base.error.empty() || !pool.error.empty()) {
            std::fprintf(stderr, "%s%s\n", base.error.c_str(), pool.error.c_str());
            return 1;
        }
        Dataset queries;
        queries.dim = pool.dim;
        for (size_t i = 0; i < queries_n; ++i)
            queries.data.insert(queries.data.end(), pool.row(i * 100), pool.row(i * 100) + pool.dim);
        report("glove-100 (cosine, held-out queries)", base, queries, hnsw::Metric::Cosine, m, efc);
    }
    return 0;
}

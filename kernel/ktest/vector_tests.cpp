// The vector store through its system calls: collections behind capabilities, index work in
// the worker tasks, searches running in parallel while inserts are serialised against them.
#include "../mm/kheap.h"
#include "../vector/collection.h"
#include "../vector/service.h"
#include "cases.h"

#include <hnsw/params.h>
#include <hnsw/rng.h>

namespace ktest {
namespace {

constexpr uint32_t kDim = 32, kCount = 1500, kExtra = 300;
float g_data[(kCount + kExtra) * kDim];
float g_queries[50 * kDim];

float l2(const float* a, const float* b) {
    float s = 0;
    for (uint32_t i = 0; i < kDim; ++i)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return s;
}

struct Searcher {
    uint32_t slot = 0;
    volatile bool done = false;
    uint32_t searches = 0;
    bool torn = false;
};
Searcher g_searchers[2];
uint32_t g_inserter_slot = 0;

int64_t searcher(void* arg) {
    auto& s = *static_cast<Searcher*>(arg);
    hnsw::Hit hits[10];
    for (uint32_t i = 0; i < 150; ++i) {
        int64_t n = sys::vec_search(s.slot, &g_queries[(i % 50) * kDim], 10, 48, hits, nullptr);
        if (n != 10)
            return n < 0 ? n : -1000;
        for (int j = 1; j < 10; ++j)
            if (hits[j].distance < hits[j - 1].distance || hits[j].id == 0 || hits[j].id > kCount + kExtra)
                s.torn = true;
        ++s.searches;
    }
    return 0;
}

int64_t inserter(void*) {
    uint64_t ids[50];
    for (uint32_t b = 0; b < kExtra / 50; ++b) {
        for (uint32_t i = 0; i < 50; ++i)
            ids[i] = kCount + b * 50 + i + 1;
        int64_t r = sys::vec_insert(g_inserter_slot, ids, &g_data[(kCount + b * 50) * kDim], 50, 0);
        if (r != 50)
            return r < 0 ? r : -1000;
    }
    return 0;
}

} // namespace

bool vector_store(const Caps& caps) {
    hnsw::Rng gen(7);
    for (auto& x : g_data)
        x = float(gen.next() >> 40) * (1.0f / 16777216.0f);
    for (auto& x : g_queries)
        x = float(gen.next() >> 40) * (1.0f / 16777216.0f);

    vector::CreateParams params { kDim, 0, 12, 100, kCount + kExtra, 128, 0 };
    int64_t coll = sys::vec_create(caps.factory, &params);
    KT_CHECK(coll >= 0, "vec_create %lld", (long long)coll);
    vector::CreateParams bad { 5000, 0, 0, 0, 10, 0, 0 };
    KT_CHECK(sys::vec_create(caps.factory, &bad) == -int64_t(ktl::Error::InvalidArgs), "dimension 5000 accepted");

    uint64_t ids[100];
    uint64_t t0 = sys::clock_ns();
    for (uint32_t b = 0; b < kCount / 100; ++b) {
        for (uint32_t i = 0; i < 100; ++i)
            ids[i] = b * 100 + i + 1;
        int64_t r = sys::vec_insert(coll, ids, &g_data[b * 100 * kDim], 100, 0);
        KT_CHECK(r == 100, "insert batch %u -> %lld", b, (long long)r);
    }
    uint64_t insert_ms = (sys::clock_ns() - t0) / kMs;

    // Recall against exact search.
    uint32_t agree = 0;
    hnsw::Hit hits[10];
    for (uint32_t q = 0; q < 50; ++q) {
        int64_t n = sys::vec_search(coll, &g_queries[q * kDim], 10, 64, hits, nullptr);
        KT_CHECK(n == 10, "search -> %lld", (long long)n);
        float best[10];
        uint64_t best_id[10];
        for (int j = 0; j < 10; ++j) {
            best[j] = 1e30f;
            best_id[j] = 0;
        }
        for (uint32_t i = 0; i < kCount; ++i) {
            float d = l2(&g_queries[q * kDim], &g_data[i * kDim]);
            if (d >= best[9])
                continue;
            int j = 9;
            for (; j > 0 && best[j - 1] > d; --j) {
                best[j] = best[j - 1];
                best_id[j] = best_id[j - 1];
            }
            best[j] = d;
            best_id[j] = i + 1;
        }
        for (int a = 0; a < 10; ++a)
            for (int b = 0; b < 10; ++b)
                agree += hits[a].id == best_id[b];
    }
    double recall = agree / 500.0;
    KT_CHECK(recall >= 0.9, "recall@10 %.3f", recall);

    float back[kDim];
    KT_CHECK(sys::vec_get(coll, 8, back, nullptr) == kDim, "get");
    for (uint32_t i = 0; i < kDim; ++i)
        KT_CHECK(back[i] == g_data[7 * kDim + i], "stored vector differs");

    // Deletes are never returned.
    for (uint64_t id = 1; id <= kCount; id += 15)
        KT_CHECK(sys::vec_delete(coll, id, 0, nullptr) == 0, "delete %llu", (unsigned long long)id);
    for (uint32_t q = 0; q < 50; ++q) {
        int64_t n = sys::vec_search(coll, &g_queries[q * kDim], 10, 64, hits, nullptr);
        KT_CHECK(n == 10, "search after delete");
        for (int j = 0; j < 10; ++j)
            KT_CHECK((hits[j].id - 1) % 15 != 0, "deleted id %llu returned", (unsigned long long)hits[j].id);
    }
    vector::Stats st {};
    KT_CHECK(sys::vec_stats(coll, &st) == 0, "stats");
    KT_CHECK(st.count == kCount - 100, "count %llu", (unsigned long long)st.count);

    // Parallel searches while an inserter runs: no torn results, reads overlapped.
    for (int s = 0; s < 2; ++s) {
        g_searchers[s] = Searcher {};
    }
    int64_t tasks[3];
    for (int s = 0; s < 2; ++s) {
        // At the workers' priority, so a new request arrives while another is being served.
        tasks[s] = spawn(caps, "searcher", searcher, &g_searchers[s], 18);
        KT_CHECK(tasks[s] >= 0, "spawn searcher");
        int64_t ro = share(static_cast<uint32_t>(coll), static_cast<uint32_t>(tasks[s]), 0x1);
        KT_CHECK(ro >= 0, "share read-only");
        g_searchers[s].slot = static_cast<uint32_t>(ro);
    }
    tasks[2] = spawn(caps, "inserter", inserter, nullptr, 18);
    KT_CHECK(tasks[2] >= 0, "spawn inserter");
    int64_t rw = share(static_cast<uint32_t>(coll), static_cast<uint32_t>(tasks[2]), 0x3);
    KT_CHECK(rw >= 0, "share read-write");
    g_inserter_slot = static_cast<uint32_t>(rw);
    for (int t = 0; t < 3; ++t) {
        int64_t code = join(static_cast<uint32_t>(tasks[t]), 30000 * kMs);
        KT_CHECK(code == 0, "task %d ended with %lld", t, (long long)code);
    }
    KT_CHECK(!g_searchers[0].torn && !g_searchers[1].torn, "a search saw a torn index");
    KT_CHECK(sys::vec_stats(coll, &st) == 0 && st.count == kCount - 100 + kExtra, "count after concurrent inserts %llu",
             (unsigned long long)st.count);
    auto svc = vector::stats();
    KT_CHECK(svc.max_concurrent_reads >= 2, "searches never overlapped (max %u)", svc.max_concurrent_reads);

    // Snapshot export and import: the copy answers identically; damaged snapshots are refused.
    int64_t need = sys::vec_export(coll, nullptr, 0, 0);
    KT_CHECK(need > 0, "export size %lld", (long long)need);
    auto mem = kheap::alloc(static_cast<size_t>(need));
    KT_CHECK(mem.ok(), "snapshot buffer");
    auto* snap = static_cast<uint8_t*>(*mem);
    KT_CHECK(sys::vec_export(coll, snap, need, 0) == need, "export");
    int64_t copy = sys::vec_import(caps.factory, snap, need, 0);
    KT_CHECK(copy >= 0, "import %lld", (long long)copy);
    hnsw::Hit a[10], b[10];
    for (uint32_t q = 0; q < 50; ++q) {
        const float* qp = &g_queries[q * kDim];
        KT_CHECK(sys::vec_search(coll, qp, 10, 64, a, nullptr) == 10 &&
                     sys::vec_search(copy, qp, 10, 64, b, nullptr) == 10,
                 "search original and copy");
        for (int j = 0; j < 10; ++j)
            KT_CHECK(a[j].id == b[j].id && a[j].distance == b[j].distance, "the imported copy answers differently");
    }
    KT_CHECK(sys::vec_import(caps.factory, snap, need - 1, 0) < 0, "truncated snapshot accepted");
    snap[need / 2] ^= 0x40;
    int64_t damaged = sys::vec_import(caps.factory, snap, need, 0);
    KT_CHECK(damaged == -int64_t(ktl::Error::Corrupt), "damaged snapshot -> %lld", (long long)damaged);
    kheap::free(snap);
    KT_CHECK(sys::object_destroy(copy) == 0, "drop the copy");

    // A full collection gives a clean error and keeps working.
    vector::CreateParams small { kDim, 0, 8, 50, 50, 64, 0 };
    int64_t tiny = sys::vec_create(caps.factory, &small);
    KT_CHECK(tiny >= 0, "create small");
    uint64_t many[100];
    for (uint32_t i = 0; i < 100; ++i)
        many[i] = i + 1;
    int64_t stored = sys::vec_insert(tiny, many, g_data, 100, 0);
    KT_CHECK(stored == 50, "filled %lld of a 50-slot collection", (long long)stored);
    int64_t over = sys::vec_insert(tiny, &many[60], &g_data[60 * kDim], 1, 0);
    KT_CHECK(over == -int64_t(ktl::Error::Full), "insert into a full collection -> %lld", (long long)over);
    KT_CHECK(sys::vec_search(tiny, g_queries, 10, 32, a, nullptr) == 10, "a full collection still searches");
    KT_CHECK(sys::object_destroy(tiny) == 0, "drop small");

    // Rights: a read-only capability cannot write; the collection drops cleanly when idle.
    int64_t ro = sys::cap_mint(coll, 0x1, 0);
    KT_CHECK(ro >= 0, "mint");
    KT_CHECK(sys::vec_delete(ro, 2, 0, nullptr) == -int64_t(ktl::Error::AccessDenied), "delete through read-only cap");
    KT_CHECK(sys::object_destroy(coll) == 0, "drop");
    KT_CHECK(sys::vec_stats(coll, &st) == -int64_t(ktl::Error::BadHandle), "collection usable after drop");
    console::printf("ktest:   vectors: %u inserted in %llu ms, recall@10 %.3f at ef 64, deletes never returned, "
                    "%u+%u parallel searches during inserts (max %u concurrent), snapshot %lld bytes round trip, "
                    "full collection refused cleanly, read-only enforced\n",
                    kCount, (unsigned long long)insert_ms, recall, g_searchers[0].searches, g_searchers[1].searches,
                    svc.max_concurrent_reads, (long long)need);
    return true;
}

} // namespace ktest

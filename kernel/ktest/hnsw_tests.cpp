// The vector index inside the kernel: the host's golden build reproduced bit for bit (same
// snapshot CRC and nearest neighbour with NEON and with the scalar kernels), and search speed
// with NEON on and off under QEMU.
#include "../mm/kheap.h"
#include "../sched/scheduler.h"
#include "cases.h"

#include <hnsw/crc32.h>
#include <hnsw/index.h>
#include <hnsw/rng.h>

#include <cstring>

namespace ktest {
namespace {

// Heap memory owned by one test step; released on scope exit.
struct Buffer {
    explicit Buffer(size_t n) : size(n) {
        auto r = kheap::alloc(n);
        data = r ? static_cast<std::byte*>(*r) : nullptr;
    }
    ~Buffer() { kheap::free(data); }
    std::byte* data;
    size_t size;
};

float next_float(hnsw::Rng& gen) { return float(gen.next() >> 40) * (1.0f / 16777216.0f) - 0.5f; }

// Mirrors tests/host/hnsw_snapshot_test.cpp "golden": 400 cosine vectors of 37 dims, every 7th
// deleted, then one query. Expected: 85,312-byte snapshot, CRC 87e56459, nearest id 831.
bool golden(hnsw::Isa isa) {
    hnsw::Params p;
    p.dim = 37;
    p.metric = hnsw::Metric::Cosine;
    p.m = 6;
    p.ef_construction = 32;
    p.max_ef = 64;
    p.max_elements = 400;
    p.compact_percent = 100;
    p.seed = 77;
    Buffer mem(hnsw::Index::memory_needed(p));
    KT_CHECK(mem.data, "no memory for the index");
    auto idx = hnsw::Index::create(p, { mem.data, mem.size });
    KT_CHECK(idx.ok(), "create: %s", ktl::error_name(idx.error()));
    KT_CHECK(idx->set_isa(isa).ok(), "isa %s unavailable", hnsw::isa_name(isa));
    hnsw::Rng gen(2024);
    float v[37];
    for (uint64_t id = 0; id < 400; ++id) {
        for (auto& x : v)
            x = next_float(gen);
        KT_CHECK(idx->insert(id * 3, v).ok(), "insert %llu", (unsigned long long)id);
    }
    for (uint64_t id = 0; id < 400; id += 7)
        KT_CHECK(idx->remove(id * 3).ok(), "remove");
    Buffer snap(idx->snapshot_size());
    auto saved = idx->save({ snap.data, snap.size });
    KT_CHECK(saved.ok(), "save");
    uint32_t crc = hnsw::crc32(0, reinterpret_cast<const uint8_t*>(snap.data), *saved);
    for (auto& x : v)
        x = next_float(gen);
    hnsw::Hit hits[5];
    auto n = idx->search(v, 5, 32, hits);
    KT_CHECK(n.ok() && *n == 5, "search");
    console::printf("ktest:   golden (%s): snapshot %zu bytes crc %08x, nearest id %llu\n", hnsw::isa_name(isa), *saved,
                    crc, (unsigned long long)hits[0].id);
    KT_CHECK(*saved == 85312 && crc == 0x87e56459u && hits[0].id == 831, "differs from the host build");
    return true;
}

// Queries per second on random 128-d L2 data, for the NEON on/off comparison.
double search_rate(hnsw::Isa isa) {
    constexpr uint32_t kDim = 128, kCount = 3000, kQueries = 200, kK = 10;
    hnsw::Params p;
    p.dim = kDim;
    p.m = 16;
    p.ef_construction = 100;
    p.max_ef = 128;
    p.max_elements = kCount;
    Buffer mem(hnsw::Index::memory_needed(p));
    Buffer data(sizeof(float) * kDim * (kCount + kQueries));
    if (!mem.data || !data.data)
        return -1;
    auto idx = hnsw::Index::create(p, { mem.data, mem.size });
    if (!idx || !idx->set_isa(isa).ok())
        return -1;
    auto* f = reinterpret_cast<float*>(data.data);
    hnsw::Rng gen(99);
    for (uint32_t i = 0; i < kDim * (kCount + kQueries); ++i)
        f[i] = next_float(gen);
    for (uint32_t i = 0; i < kCount; ++i)
        if (!idx->insert(i, { f + i * kDim, kDim }).ok())
            return -1;
    hnsw::Hit hits[kK];
    uint64_t t0 = sys::clock_ns();
    for (uint32_t q = 0; q < kQueries; ++q) {
        auto n = idx->search({ f + (kCount + q) * kDim, kDim }, kK, 64, hits);
        if (!n || *n != kK)
            return -1;
    }
    uint64_t elapsed = sys::clock_ns() - t0;
    return elapsed ? double(kQueries) * 1e9 / double(elapsed) : 0;
}

} // namespace

bool vector_index(const Caps&) {
    KT_CHECK(hnsw::isa_available(hnsw::Isa::Neon), "NEON kernels not built in");
    if (!golden(hnsw::Isa::Neon) || !golden(hnsw::Isa::Scalar))
        return false;
    double neon = search_rate(hnsw::Isa::Neon);
    double scalar = search_rate(hnsw::Isa::Scalar);
    KT_CHECK(neon > 0 && scalar > 0, "search benchmark failed");
    console::printf("ktest:   3000 x 128-d L2, ef 64, k 10: %.0f queries/s with NEON, %.0f scalar (%.2fx)\n", neon,
                    scalar, neon / scalar);
    return true;
}

} // namespace ktest

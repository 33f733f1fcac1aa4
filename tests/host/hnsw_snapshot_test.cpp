// Snapshots: identical results and bytes after a round trip, deterministic bytes, and every
// truncation / byte flip of a small snapshot rejected without a crash.
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

// An index with live nodes, tombstones and free slots, so every section has content.
struct Built {
    hnsw::Params params;
    Dataset data;
    OwnedIndex index;

    Built(uint32_t dim, size_t n, hnsw::Metric metric, uint32_t seed)
        : params(make_params(dim, n, metric)), data(make_random(dim, n + 20, seed)), index(params) {
        for (size_t i = 0; i < n; ++i)
            EXPECT_TRUE(index.index.insert(i * 7 + 1, { data.row(i), dim }).ok());
        for (size_t i = 0; i < n; i += 5)
            EXPECT_TRUE(index.index.remove(i * 7 + 1).ok());
        EXPECT_TRUE(index.index.compact().ok());
        for (size_t i = 1; i < n; i += 9)
            if (i % 5 != 0) {
                EXPECT_TRUE(index.index.remove(i * 7 + 1).ok()); // left as tombstones
            }
        for (size_t i = 0; i < 3; ++i)
            EXPECT_TRUE(index.index.insert(90000 + i, { data.row(n + i), dim }).ok()); // reuse
        auto s = index.index.stats();
        EXPECT_GT(s.deleted, 0u);
        EXPECT_GT(s.free_slots, 0u);
    }

    static hnsw::Params make_params(uint32_t dim, size_t n, hnsw::Metric metric) {
        hnsw::Params p;
        p.dim = dim;
        p.metric = metric;
        p.m = 4;
        p.ef_construction = 32;
        p.max_ef = 64;
        p.max_elements = uint32_t(n);
        p.compact_percent = 100;
        p.seed = 77;
        return p;
    }
};

ktl::Error load_error(std::span<const std::byte> snap, size_t memory) {
    std::vector<std::byte> mem(memory);
    return hnsw::Index::load(snap, mem).error();
}

} // namespace

TEST(HnswSnapshot, RoundTripIdenticalResultsAndBytes) {
    for (hnsw::Metric metric : { hnsw::Metric::L2, hnsw::Metric::Cosine, hnsw::Metric::InnerProduct }) {
        Built b(20, 600, metric, 3);
        hnsw::Index& a = b.index.index;
        auto snap = save(a);
        auto peeked = hnsw::Index::peek(snap);
        ASSERT_TRUE(peeked.ok());
        EXPECT_EQ(peeked->dim, 20u);
        EXPECT_EQ(peeked->max_elements, 600u);
        EXPECT_EQ(peeked->metric, metric);
        std::vector<std::byte> mem(hnsw::Index::memory_needed(*peeked));
        auto loaded = hnsw::Index::load(snap, mem);
        ASSERT_TRUE(loaded.ok()) << ktl::error_name(loaded.error());
        hnsw::Index& c = *loaded;
        EXPECT_EQ(save(c), snap);
        auto sa = a.stats(), sc = c.stats();
        EXPECT_EQ(sa.count, sc.count);
        EXPECT_EQ(sa.deleted, sc.deleted);
        EXPECT_EQ(sa.free_slots, sc.free_slots);
        EXPECT_EQ(sa.levels, sc.levels);
        Dataset q = make_random(20, 50, 99);
        for (size_t i = 0; i < q.size(); ++i) {
            std::vector<hnsw::Hit> ha(10), hc(10);
            auto ra = a.search({ q.row(i), 20 }, 10, 40, ha);
            auto rc = c.search({ q.row(i), 20 }, 10, 40, hc);
            ASSERT_TRUE(ra.ok() && rc.ok());
            ASSERT_EQ(*ra, *rc);
            for (size_t j = 0; j < *ra; ++j) {
                EXPECT_EQ(ha[j].id, hc[j].id);
                EXPECT_EQ(std::memcmp(&ha[j].distance, &hc[j].distance, 4), 0);
            }
        }
        // Same future: the same inserts and deletes after the round trip give the same bytes
        // (RNG state, free queue and tombstones all restored).
        for (size_t i = 0; i < 10; ++i) {
            ASSERT_TRUE(a.insert(50000 + i, { q.row(i), 20 }).ok());
            ASSERT_TRUE(c.insert(50000 + i, { q.row(i), 20 }).ok());
        }
        ASSERT_TRUE(a.remove(50003).ok());
        ASSERT_TRUE(c.remove(50003).ok());
        ASSERT_TRUE(a.compact().ok());
        ASSERT_TRUE(c.compact().ok());
        EXPECT_EQ(save(a), save(c));
    }
}

TEST(HnswSnapshot, EmptyIndexRoundTrips) {
    hnsw::Params p = Built::make_params(4, 10, hnsw::Metric::L2);
    OwnedIndex a(p);
    auto snap = save(a.index);
    std::vector<std::byte> mem(hnsw::Index::memory_needed(p));
    auto loaded = hnsw::Index::load(snap, mem);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->size(), 0u);
    const float v[4] = { 1, 2, 3, 4 };
    EXPECT_TRUE(loaded->insert(1, v).ok());
}

// A snapshot that declares a large capacity but holds little costs what it holds; the caller can
// still ask for any capacity that fits what it holds.
TEST(HnswSnapshot, LoadIsSizedByContentUnlessAskedOtherwise) {
    hnsw::Params p = Built::make_params(8, 200000, hnsw::Metric::L2);
    OwnedIndex a(p);
    Dataset d = make_random(8, 10, 4);
    for (size_t i = 0; i < 10; ++i)
        ASSERT_TRUE(a.index.insert(i + 1, { d.row(i), 8 }).ok());
    auto snap = save(a.index);
    ASSERT_EQ(hnsw::Index::peek(snap)->max_elements, 200000u);

    auto sized = hnsw::Index::load_params(snap);
    ASSERT_TRUE(sized.ok());
    EXPECT_EQ(sized->max_elements, hnsw::Index::kLoadMinCapacity);
    EXPECT_LT(hnsw::Index::memory_needed(*sized) * 50, hnsw::Index::memory_needed(p));
    std::vector<std::byte> mem(hnsw::Index::memory_needed(*sized));
    auto loaded = hnsw::Index::load(snap, mem);
    ASSERT_TRUE(loaded.ok()) << ktl::error_name(loaded.error());
    EXPECT_EQ(loaded->stats().capacity, hnsw::Index::kLoadMinCapacity);
    EXPECT_EQ(loaded->size(), 10u);
    std::vector<hnsw::Hit> hits(1);
    auto found = loaded->search({ d.row(3), 8 }, 1, 16, hits);
    ASSERT_TRUE(found.ok() && *found == 1);
    EXPECT_EQ(hits[0].id, 4u);

    // Asked for: the declared capacity back, or anything from the used slots up.
    EXPECT_EQ(hnsw::Index::load_params(snap, 200000)->max_elements, 200000u);
    EXPECT_EQ(hnsw::Index::load_params(snap, 10)->max_elements, 10u);
    EXPECT_EQ(hnsw::Index::load_params(snap, 9).error(), Error::OutOfRange);
    std::vector<std::byte> exact(hnsw::Index::memory_needed(*hnsw::Index::load_params(snap, 10)));
    auto full = hnsw::Index::load(snap, exact, 10);
    ASSERT_TRUE(full.ok());
    EXPECT_FALSE(full->insert(11, { d.row(0), 8 }).ok()); // ten slots, all used

    // A big index keeps room to grow: twice what it uses, never more than it declared.
    Built b(6, 700, hnsw::Metric::L2, 2);
    auto big = save(b.index.index);
    const uint32_t used = b.index.index.stats().count + b.index.index.stats().deleted +
                          b.index.index.stats().free_slots;
    EXPECT_EQ(hnsw::Index::load_params(big)->max_elements, std::min<uint32_t>(700, 2 * used));
}

TEST(HnswSnapshot, EveryTruncationRejected) {
    Built b(6, 40, hnsw::Metric::L2, 5);
    auto snap = save(b.index.index);
    const size_t memory = hnsw::Index::memory_needed(b.params);
    ASSERT_EQ(load_error(snap, memory), Error::None);
    for (size_t len = 0; len < snap.size(); ++len) {
        Error e = load_error(std::span<const std::byte>(snap).first(len), memory);
        ASSERT_TRUE(e == Error::Truncated || e == Error::Corrupt) << "length " << len << ": " << ktl::error_name(e);
    }
    // Trailing bytes are rejected too.
    auto longer = snap;
    longer.push_back(std::byte { 0 });
    EXPECT_EQ(load_error(longer, memory), Error::Corrupt);
    std::printf("snapshot of %zu bytes: all %zu truncations rejected\n", snap.size(), snap.size());
}

TEST(HnswSnapshot, EveryByteFlipRejected) {
    Built b(6, 40, hnsw::Metric::Cosine, 6);
    auto snap = save(b.index.index);
    const size_t memory = hnsw::Index::memory_needed(b.params);
    for (size_t at = 0; at < snap.size(); ++at) {
        for (uint8_t mask : { 0x01, 0x80, 0xff }) {
            auto bad = snap;
            bad[at] ^= std::byte { mask };
            Error e = load_error(bad, memory);
            ASSERT_NE(e, Error::None) << "flip " << int(mask) << " at " << at << " accepted";
        }
    }
}

// CRCs only catch accidents; a crafted snapshot with valid CRCs but broken structure must
// still be refused (links out of range, to free slots, above a node's level; bad counts).
TEST(HnswSnapshot, StructuralChecksBehindValidCrcs) {
    Built b(4, 30, hnsw::Metric::L2, 8);
    auto snap = save(b.index.index);
    const size_t memory = hnsw::Index::memory_needed(b.params);
    auto u32_at = [&](const std::vector<std::byte>& s, size_t at) {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= uint32_t(uint8_t(s[at + i])) << (8 * i);
        return v;
    };
    auto put32 = [&](std::vector<std::byte>& s, size_t at, uint32_t v) {
        for (int i = 0; i < 4; ++i)
            s[at + i] = std::byte(uint8_t(v >> (8 * i)));
    };
    // Recompute the CRC of the section starting at `start` and of the header.
    auto reseal = [&](std::vector<std::byte>& s, size_t start) {
        uint64_t len = 0;
        for (int i = 0; i < 8; ++i)
            len |= uint64_t(uint8_t(s[start + 4 + i])) << (8 * i);
        put32(s, start + 12 + len,
              hnsw::crc32(0, reinterpret_cast<const uint8_t*>(s.data()) + start, size_t(12 + len)));
        put32(s, 112, hnsw::crc32(0, reinterpret_cast<const uint8_t*>(s.data()), 112));
    };
    const size_t node_section = 116;
    // Find the first live node record: flags byte 1 right after the NODE section header.
    size_t at = node_section + 12;
    while (uint8_t(snap[at]) == 0)
        ++at;
    ASSERT_NE(uint8_t(snap[at]), 0);
    const size_t level_at = at + 1, count_at = at + 20, first_link_at = at + 24; // flags, level, 0, id, tag
    ASSERT_GT(u32_at(snap, count_at), 0u);
    const uint32_t high_water = u32_at(snap, 80);

    auto expect_corrupt = [&](auto mutate, const char* what) {
        auto bad = snap;
        mutate(bad);
        reseal(bad, node_section);
        EXPECT_EQ(load_error(bad, memory), Error::Corrupt) << what;
    };
    expect_corrupt([&](auto& s) { put32(s, first_link_at, high_water); }, "link past high water");
    expect_corrupt([&](auto& s) { put32(s, first_link_at, 0xffffffffu); }, "link kNone");
    expect_corrupt([&](auto& s) { put32(s, count_at, 9); }, "count above 2M");
    expect_corrupt([&](auto& s) { s[level_at] = std::byte { 16 }; }, "level above kMaxLevel");
    expect_corrupt([&](auto& s) { s[at] = std::byte { 3 }; }, "unknown flags");
    // Header fields (resealed header only).
    auto header_corrupt = [&](size_t field, uint32_t value, Error want) {
        auto bad = snap;
        put32(bad, field, value);
        put32(bad, 112, hnsw::crc32(0, reinterpret_cast<const uint8_t*>(bad.data()), 112));
        EXPECT_EQ(load_error(bad, memory), want) << "field at " << field;
    };
    header_corrupt(8, 4, Error::Unsupported);           // version (1, 2 and 3 are read)
    header_corrupt(12, 0x04030201, Error::Unsupported); // byte-swapped writer
    header_corrupt(32, 0, Error::Corrupt);              // dim
    header_corrupt(36, 9, Error::Corrupt);              // metric
    header_corrupt(40, 1000, Error::Corrupt);           // m
    header_corrupt(80, high_water + 1, Error::Corrupt); // high water vs counts
    header_corrupt(100, 5, Error::Corrupt);             // max level vs entry
    header_corrupt(96, high_water, Error::Corrupt);     // entry out of range
    // Random resealed corruption of the node records: loads either fail cleanly or give an
    // index that searches, inserts and deletes without any out-of-bounds access (ASan).
    std::mt19937 gen(1234);
    uint64_t node_len = 0;
    for (int i = 0; i < 8; ++i)
        node_len |= uint64_t(uint8_t(snap[node_section + 4 + i])) << (8 * i);
    int accepted = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        auto bad = snap;
        for (int k = 0, n = 1 + int(gen() % 4); k < n; ++k)
            bad[node_section + 12 + gen() % node_len] = std::byte(uint8_t(gen()));
        reseal(bad, node_section);
        std::vector<std::byte> mem(memory);
        auto r = hnsw::Index::load(bad, mem);
        if (!r.ok())
            continue;
        ++accepted;
        const float q[4] = { 0.1f, 0.2f, 0.3f, 0.4f };
        std::vector<hnsw::Hit> out(5);
        EXPECT_TRUE(r->search(q, 5, 20, out).ok());
        (void)r->insert(123456789, q);
        (void)r->remove(123456789);
        (void)r->compact();
    }
    std::printf("resealed random corruption: %d of 3000 loads accepted (e.g. vector bytes)\n", accepted);
    // Too little memory for the snapshot's parameters.
    EXPECT_EQ(load_error(snap, hnsw::Index::memory_fixed(b.params) / 2), Error::NoMemory);
}

// Cross-platform golden values: data from the integer PRNG (exact floats), so an AArch64
// build (kernel T1 tests, NEON) must reproduce these bits exactly. A deliberate change of the
// graph algorithm or the snapshot format updates the constants.
TEST(HnswSnapshot, GoldenBuildIsPlatformIndependent) {
    int kernel_sets = 0;
    for (hnsw::Isa isa : { hnsw::Isa::Scalar, hnsw::Isa::Sse, hnsw::Isa::Avx, hnsw::Isa::Avx512, hnsw::Isa::Neon }) {
        if (!hnsw::isa_available(isa))
            continue;
        ++kernel_sets;
        hnsw::Rng gen(2024);
        auto next_float = [&] { return float(gen.next() >> 40) * (1.0f / 16777216.0f) - 0.5f; };
        hnsw::Params p = Built::make_params(37, 400, hnsw::Metric::Cosine);
        p.m = 6;
        OwnedIndex idx(p);
        ASSERT_TRUE(idx.index.set_isa(isa).ok());
        std::vector<float> v(37);
        for (uint64_t id = 0; id < 400; ++id) {
            for (auto& x : v)
                x = next_float();
            ASSERT_TRUE(idx.index.insert(id * 3, v).ok());
        }
        for (uint64_t id = 0; id < 400; id += 7)
            ASSERT_TRUE(idx.index.remove(id * 3).ok());
        auto snap = save(idx.index);
        const uint32_t crc = hnsw::crc32(0, reinterpret_cast<const uint8_t*>(snap.data()), snap.size());
        for (auto& x : v)
            x = next_float();
        std::vector<hnsw::Hit> hits(5);
        auto n = idx.index.search(v, 5, 32, hits);
        ASSERT_TRUE(n.ok());
        ASSERT_EQ(*n, 5u);
        uint32_t dist_bits;
        std::memcpy(&dist_bits, &hits[0].distance, 4);
        std::printf("golden (%s): snapshot %zu bytes crc %08x, nearest id %llu distance bits %08x\n",
                    hnsw::isa_name(isa), snap.size(), crc, (unsigned long long)hits[0].id, dist_bits);
        EXPECT_EQ(snap.size(), 85312u);
        EXPECT_EQ(crc, 0x87e56459u);
        EXPECT_EQ(hits[0].id, 831u);
        EXPECT_EQ(dist_bits, 0x3f129e25u);
    }
    EXPECT_GE(kernel_sets, 1);
}

// A snapshot read in windows (save_range) is byte for byte the snapshot save() writes, however
// the windows fall: across the header, records, section boundaries and CRCs, past the end.
TEST(HnswSnapshot, RangesAreSlicesOfTheWholeSnapshot) {
    Built b(12, 300, hnsw::Metric::L2, 9);
    const hnsw::Index& index = b.index.index;
    const size_t size = index.snapshot_size();
    std::vector<std::byte> whole(size);
    ASSERT_EQ(index.save(whole).value(), size);
    std::mt19937 gen(5);
    for (int i = 0; i < 2000; ++i) {
        uint64_t offset = gen() % (size + 1);
        size_t len = 1 + gen() % (i % 10 == 0 ? size : 300);
        std::vector<std::byte> part(len, std::byte { 0xee });
        auto got = index.save_range(offset, part);
        ASSERT_TRUE(got.ok());
        ASSERT_EQ(*got, std::min<size_t>(len, size - offset));
        ASSERT_EQ(std::memcmp(part.data(), whole.data() + offset, *got), 0) << "offset " << offset << " len " << len;
    }
    // Paged front to back in odd-sized pages, the pages join into a snapshot that loads.
    std::vector<std::byte> joined;
    for (uint64_t at = 0; at < size;) {
        std::vector<std::byte> page(997);
        size_t n = index.save_range(at, page).value();
        joined.insert(joined.end(), page.begin(), page.begin() + n);
        at += n;
    }
    EXPECT_EQ(joined, whole);
    EXPECT_EQ(index.save_range(size + 1, joined).error(), Error::OutOfRange);
    std::vector<std::byte> mem(hnsw::Index::memory_needed(hnsw::Index::peek(joined).value()));
    EXPECT_TRUE(hnsw::Index::load(joined, mem).ok());
}

// An export read in order resumes where the page before stopped; a change between two pages
// (insert, upsert, remove, compact) makes the next page a slice of the changed snapshot, never a
// mix of the two.
TEST(HnswSnapshot, APageAfterAChangeIsASliceOfTheNewSnapshot) {
    Built b(12, 300, hnsw::Metric::L2, 9);
    hnsw::Index& index = b.index.index;
    Dataset extra = make_random(12, 8, 77);
    auto slice_of_whole = [&](uint64_t at, size_t len) {
        std::vector<std::byte> whole(index.snapshot_size());
        EXPECT_EQ(index.save(whole).value(), whole.size());
        std::vector<std::byte> page(len);
        const size_t n = index.save_range(at, page).value();
        EXPECT_EQ(n, std::min<size_t>(len, whole.size() - at));
        return std::memcmp(page.data(), whole.data() + at, n) == 0;
    };
    std::vector<std::byte> page(1500);
    ASSERT_TRUE(index.save_range(0, page).ok()); // the cursor now stands near 1500
    ASSERT_TRUE(index.insert(9000, { extra.row(0), 12 }).ok());
    EXPECT_TRUE(slice_of_whole(1500, 1500));
    EXPECT_TRUE(slice_of_whole(3000, 4000));
    ASSERT_TRUE(index.upsert(9000, { extra.row(1), 12 }).ok());
    EXPECT_TRUE(slice_of_whole(7000, 2000));
    ASSERT_TRUE(index.remove(15).ok());
    EXPECT_TRUE(slice_of_whole(9000, 100000));
    ASSERT_TRUE(index.compact().ok());
    EXPECT_TRUE(slice_of_whole(100, 3000));
    index.retag(3);
    EXPECT_TRUE(slice_of_whole(3100, 3000));
    // Backwards, and from the start again, after pages in order.
    EXPECT_TRUE(slice_of_whole(50, 10));
    EXPECT_TRUE(slice_of_whole(0, 200));
}

// Each vector keeps a 64-bit tag (the store's provenance node): insert sets it, upsert replaces
// it, removal forgets it, and snapshots carry it; a version-1 snapshot (before tags) still loads,
// its vectors untagged.
TEST(HnswSnapshot, TagsTravelWithTheirVectors) {
    hnsw::Params p = Built::make_params(6, 64, hnsw::Metric::L2);
    OwnedIndex a(p);
    Dataset d = make_random(6, 64, 5);
    for (uint32_t i = 0; i < 40; ++i)
        ASSERT_TRUE(a.index.insert(100 + i, { d.row(i), 6 }, 0xabc00000000ull + i).ok());
    ASSERT_TRUE(a.index.upsert(105, { d.row(50), 6 }, 77).ok());
    ASSERT_TRUE(a.index.remove(106).ok());
    EXPECT_EQ(*a.index.tag_of(100), 0xabc00000000ull);
    EXPECT_EQ(*a.index.tag_of(105), 77u) << "the write that replaced it";
    EXPECT_EQ(a.index.tag_of(106).error(), Error::NotFound);
    EXPECT_EQ(a.index.tag_of(5).error(), Error::NotFound);

    auto snap = save(a.index);
    std::vector<std::byte> mem(hnsw::Index::memory_needed(p));
    auto loaded = hnsw::Index::load(snap, mem);
    ASSERT_TRUE(loaded.ok());
    for (uint32_t i = 0; i < 40; ++i) {
        if (i == 6)
            continue;
        EXPECT_EQ(*loaded->tag_of(100 + i), i == 5 ? 77u : 0xabc00000000ull + i) << i;
    }

    // The same snapshot in version 1: NODE records without the tag, sizes and CRCs redone.
    auto u32_at = [](const std::vector<std::byte>& s, size_t at) {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= uint32_t(uint8_t(s[at + i])) << (8 * i);
        return v;
    };
    auto put = [](std::vector<std::byte>& s, size_t at, uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            s[at + i] = std::byte(uint8_t(v >> (8 * i)));
    };
    const size_t node_section = 116;
    const uint32_t high_water = u32_at(snap, 80);
    std::vector<std::byte> v1(snap.begin(), snap.begin() + node_section + 12);
    size_t at = node_section + 12;
    for (uint32_t s = 0; s < high_water; ++s) {
        const uint8_t flags = uint8_t(snap[at]);
        if (flags == 0) {
            v1.push_back(snap[at++]);
            continue;
        }
        const uint8_t level = uint8_t(snap[at + 1]);
        v1.insert(v1.end(), snap.begin() + at, snap.begin() + at + 12); // flags, level, 0, id
        at += 20;                                                       // ... and the tag, dropped
        size_t body = 0;
        for (uint32_t l = 0; l <= level; ++l)
            body += 4 + 4 * size_t(u32_at(snap, at + body));
        body += 4 * 6;
        v1.insert(v1.end(), snap.begin() + at, snap.begin() + at + body);
        at += body;
    }
    at += 4; // the NODE section's CRC, redone below
    const size_t node_payload = v1.size() - (node_section + 12);
    v1.resize(v1.size() + 4);
    v1.insert(v1.end(), snap.begin() + at, snap.end()); // TOMB and FREE as they were
    put(v1, node_section + 4, node_payload, 8);
    put(v1, node_section + 12 + node_payload,
        hnsw::crc32(0, reinterpret_cast<const uint8_t*>(v1.data()) + node_section, 12 + node_payload), 4);
    put(v1, 8, 1, 4);          // version 1
    put(v1, 24, v1.size(), 8); // total size
    put(v1, 112, hnsw::crc32(0, reinterpret_cast<const uint8_t*>(v1.data()), 112), 4);
    std::vector<std::byte> mem1(hnsw::Index::memory_needed(p));
    auto old = hnsw::Index::load(v1, mem1);
    ASSERT_TRUE(old.ok()) << ktl::error_name(old.error());
    EXPECT_EQ(old->size(), loaded->size());
    EXPECT_EQ(*old->tag_of(105), 0u) << "untagged before version 2";
    std::vector<float> x(6), y(6);
    ASSERT_TRUE(old->get(105, x).ok());
    ASSERT_TRUE(loaded->get(105, y).ok());
    EXPECT_EQ(x, y) << "the vectors themselves are the same";
}

// Distance kernels: every SIMD path bit-identical to the scalar one, the documented
// reduction order, plus CRC-32 and the level PRNG.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <hnsw/crc32.h>
#include <hnsw/distance.h>
#include <hnsw/rng.h>

namespace {

uint32_t bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

std::vector<float> random_vector(std::mt19937& gen, uint32_t n, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(gen);
    return v;
}

// The order documented in distance.h, written independently of the library.
float reference(const float* a, const float* b, uint32_t n, bool l2) {
    float lane[32] = {};
    for (uint32_t i = 0; i < n; ++i) {
        volatile float t = l2 ? (a[i] - b[i]) : a[i];
        volatile float u = l2 ? float(t) : b[i];
        volatile float prod = float(t) * float(u);
        lane[i % 32] = lane[i % 32] + float(prod);
    }
    float s[16], r[8], t[4];
    for (int j = 0; j < 16; ++j)
        s[j] = lane[j] + lane[j + 16];
    for (int j = 0; j < 8; ++j)
        r[j] = s[j] + s[j + 8];
    for (int j = 0; j < 4; ++j)
        t[j] = r[j] + r[j + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

const hnsw::Isa kSimd[] = { hnsw::Isa::Sse, hnsw::Isa::Avx, hnsw::Isa::Avx512, hnsw::Isa::Neon };

} // namespace

TEST(HnswDistance, SimdBitIdenticalToScalar) {
    std::mt19937 gen(7);
    int tested = 0;
    for (hnsw::Isa isa : kSimd) {
        if (!hnsw::isa_available(isa))
            continue;
        ++tested;
        hnsw::Kernels simd = hnsw::kernels_for(isa);
        ASSERT_EQ(simd.isa, isa);
        for (uint32_t n = 1; n <= 4096; n = n < 80 ? n + 1 : n * 2 - 1) {
            for (int rep = 0; rep < 20; ++rep) {
                float scale = rep % 2 ? 1e-3f : 100.0f;
                auto a = random_vector(gen, n, scale), b = random_vector(gen, n, scale);
                ASSERT_EQ(bits(simd.l2(a.data(), b.data(), n)), bits(hnsw::l2_scalar(a.data(), b.data(), n)))
                    << hnsw::isa_name(isa) << " n=" << n;
                ASSERT_EQ(bits(simd.ip(a.data(), b.data(), n)), bits(hnsw::ip_scalar(a.data(), b.data(), n)))
                    << hnsw::isa_name(isa) << " n=" << n;
                ASSERT_EQ(bits(simd.dot(a.data(), b.data(), n)), bits(hnsw::dot_scalar(a.data(), b.data(), n)))
                    << hnsw::isa_name(isa) << " n=" << n;
            }
        }
    }
#if defined(__x86_64__) || defined(__ARM_NEON)
    EXPECT_GT(tested, 0) << "no SIMD kernel compiled in on a SIMD host";
#endif
    std::printf("%d SIMD kernel sets checked; best: %s\n", tested, hnsw::isa_name(hnsw::best_kernels().isa));
}

TEST(HnswDistance, ScalarFollowsDocumentedOrder) {
    std::mt19937 gen(11);
    for (uint32_t n : { 1u, 3u, 15u, 16u, 17u, 31u, 32u, 33u, 100u, 784u, 4096u }) {
        auto a = random_vector(gen, n, 10.0f), b = random_vector(gen, n, 10.0f);
        EXPECT_EQ(bits(hnsw::l2_scalar(a.data(), b.data(), n)), bits(reference(a.data(), b.data(), n, true))) << n;
        EXPECT_EQ(bits(hnsw::dot_scalar(a.data(), b.data(), n)), bits(reference(a.data(), b.data(), n, false))) << n;
        EXPECT_EQ(bits(hnsw::ip_scalar(a.data(), b.data(), n)), bits(1.0f - reference(a.data(), b.data(), n, false)));
    }
    // Order matters: a naive left-to-right sum of these differs from the 32-lane one
    // (lane 0 cancels to 0 before lane 1's 1.0 is added).
    std::vector<float> a(64, 0.0f), b(64, 1.0f);
    a[0] = 1e8f;
    a[1] = 1.0f;
    a[32] = -1e8f;
    float naive = 0;
    for (int i = 0; i < 64; ++i)
        naive += a[i] * b[i];
    EXPECT_EQ(naive, 0.0f);
    EXPECT_EQ(hnsw::dot_scalar(a.data(), b.data(), 64), 1.0f);
}

TEST(HnswDistance, KnownValues) {
    const float a[3] = { 1, 2, 3 }, b[3] = { 4, 6, 3 };
    for (hnsw::Isa isa : { hnsw::Isa::Scalar, hnsw::Isa::Sse, hnsw::Isa::Avx, hnsw::Isa::Avx512, hnsw::Isa::Neon }) {
        hnsw::Kernels k = hnsw::kernels_for(isa);
        EXPECT_EQ(k.l2(a, b, 3), 25.0f);
        EXPECT_EQ(k.dot(a, b, 3), 25.0f);
        EXPECT_EQ(k.ip(a, b, 3), -24.0f);
    }
}

TEST(HnswCrc32, CheckValue) {
    const char* s = "123456789";
    EXPECT_EQ(hnsw::crc32(0, reinterpret_cast<const uint8_t*>(s), 9), 0xcbf43926u);
    EXPECT_EQ(hnsw::crc32(hnsw::crc32(0, reinterpret_cast<const uint8_t*>(s), 4),
                          reinterpret_cast<const uint8_t*>(s) + 4, 5),
              0xcbf43926u);
    EXPECT_EQ(hnsw::crc32(0, nullptr, 0), 0u);
}

TEST(HnswRng, DeterministicLevelsWithGeometricTail) {
    hnsw::Rng a(42), b(42), c(43);
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
        uint64_t x = a.next();
        EXPECT_EQ(x, b.next());
        differs |= x != c.next();
    }
    EXPECT_TRUE(differs);
    // P(level >= 1) = 1/16, P(level >= 2) = 1/256 for M = 16.
    hnsw::Rng r(1);
    int ge1 = 0, ge2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        uint32_t l = r.level(16);
        ge1 += l >= 1;
        ge2 += l >= 2;
        ASSERT_LE(l, hnsw::kMaxLevel);
    }
    EXPECT_NEAR(double(ge1) / n, 1.0 / 16, 0.003);
    EXPECT_NEAR(double(ge2) / n, 1.0 / 256, 0.001);
    // Known first value of SplitMix64 from seed 0 (Vigna's reference implementation).
    hnsw::Rng zero(0);
    EXPECT_EQ(zero.next(), 0xe220a8397b1dcdafull);
}

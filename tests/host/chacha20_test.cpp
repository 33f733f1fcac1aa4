// ChaCha20's block function against RFC 8439 (2.3.2, and the 2.4.2 keystream checked with
// OpenSSL), and the generator built on it: deterministic for a seed, different for another,
// never repeating a request's output, changed by a reseed.
#include <crypto/chacha20.h>

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

std::string hex(const uint8_t* p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        s += "0123456789abcdef"[p[i] >> 4];
        s += "0123456789abcdef"[p[i] & 15];
    }
    return s;
}

} // namespace

TEST(ChaCha20, Rfc8439BlockFunction) {
    uint8_t key[32];
    for (int i = 0; i < 32; ++i)
        key[i] = static_cast<uint8_t>(i);
    const uint8_t nonce[12] = { 0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
    uint8_t out[64];
    crypto::chacha20_block(key, 1, nonce, out);
    EXPECT_EQ(hex(out, 64), "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
                            "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e");
}

TEST(ChaCha20, Rfc8439KeystreamForEncryption) {
    // 2.4.2: same key, nonce 00:00:00:00:00:00:00:4a:00:00:00:00, counter 1; the first bytes of
    // the keystream (ciphertext XOR plaintext) are 22 4f 51 f3 40 1b d9 e1 2f de 27 6f b8 63 1d ed.
    uint8_t key[32];
    for (int i = 0; i < 32; ++i)
        key[i] = static_cast<uint8_t>(i);
    const uint8_t nonce[12] = { 0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
    uint8_t out[64];
    crypto::chacha20_block(key, 1, nonce, out);
    EXPECT_EQ(hex(out, 16), "224f51f3401bd9e12fde276fb8631ded");
}

TEST(ChaChaRng, DeterministicPerSeedDistinctAcrossSeedsRequestsAndReseeds) {
    const uint8_t seed_a[] = "seed a: 0123456789abcdef";
    const uint8_t seed_b[] = "seed b: 0123456789abcdef";
    crypto::ChaChaRng a1, a2, b;
    EXPECT_FALSE(a1.seeded());
    a1.seed(seed_a, sizeof seed_a);
    a2.seed(seed_a, sizeof seed_a);
    b.seed(seed_b, sizeof seed_b);
    EXPECT_TRUE(a1.seeded());
    std::vector<uint8_t> x(1000), y(1000), z(1000);
    a1.fill(x.data(), x.size());
    a2.fill(y.data(), y.size());
    b.fill(z.data(), z.size());
    EXPECT_EQ(x, y) << "one seed, one stream";
    EXPECT_NE(x, z) << "another seed, another stream";
    EXPECT_EQ(a1.bytes_since_reseed(), 1000u);

    // 4,000 requests of 16 bytes (session ids): all different.
    std::set<std::string> seen;
    for (int i = 0; i < 4000; ++i) {
        uint8_t id[16], twin[16];
        a1.fill(id, sizeof id);
        a2.fill(twin, sizeof twin); // a2 stays a1's twin
        ASSERT_EQ(std::memcmp(id, twin, sizeof id), 0);
        seen.insert(hex(id, sizeof id));
    }
    EXPECT_EQ(seen.size(), 4000u);

    // A reseed moves the stream away from its twin's.
    const uint8_t more[] = "fresh entropy";
    a1.reseed(more, sizeof more);
    EXPECT_EQ(a1.bytes_since_reseed(), 0u);
    a1.fill(x.data(), 64);
    a2.fill(y.data(), 64);
    EXPECT_NE(std::memcmp(x.data(), y.data(), 64), 0);

    // Roughly balanced bits over 64 KiB (a gross failure, such as a zero key stream, shows).
    std::vector<uint8_t> big(65536);
    b.fill(big.data(), big.size());
    size_t ones = 0;
    for (uint8_t v : big)
        ones += static_cast<size_t>(__builtin_popcount(v));
    EXPECT_NEAR(static_cast<double>(ones) / (big.size() * 8), 0.5, 0.01);
}

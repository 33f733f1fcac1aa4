// SHA-256 against the FIPS 180-4 / NIST example vectors, streaming in odd chunk sizes.
#include <crypto/sha256.h>

#include <gtest/gtest.h>

#include <string>

static std::string hex(const crypto::Digest& d) {
    char out[65];
    crypto::to_hex(d, out);
    return out;
}

TEST(Sha256, NistVectors) {
    EXPECT_EQ(hex(crypto::Sha256::hash("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex(crypto::Sha256::hash("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(crypto::Sha256::hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hex(crypto::Sha256::hash(
                  "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                  "klmnopqrlmnopqrsmnopqrstnopqrstu")),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, MillionAsInChunks) {
    crypto::Sha256 h;
    std::string chunk(997, 'a');
    size_t left = 1000000;
    while (left) {
        size_t n = left < chunk.size() ? left : chunk.size();
        h.update(std::string_view(chunk.data(), n));
        left -= n;
    }
    EXPECT_EQ(hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkingDoesNotMatter) {
    std::string msg;
    for (int i = 0; i < 300; ++i)
        msg.push_back(char('a' + i % 26));
    auto whole = crypto::Sha256::hash(msg);
    for (size_t step : { 1, 3, 63, 64, 65, 128 }) {
        crypto::Sha256 h;
        for (size_t i = 0; i < msg.size(); i += step)
            h.update(std::string_view(msg).substr(i, step));
        EXPECT_EQ(hex(h.finish()), hex(whole)) << "step " << step;
    }
}

TEST(Sha256, ConstantTimeCompare) {
    auto a = crypto::Sha256::hash("key-1"), b = crypto::Sha256::hash("key-2");
    EXPECT_TRUE(crypto::equal_constant_time(a, a));
    EXPECT_FALSE(crypto::equal_constant_time(a, b));
    auto c = a;
    c[31] ^= 1;
    EXPECT_FALSE(crypto::equal_constant_time(a, c)) << "a difference in the last byte counts";
}

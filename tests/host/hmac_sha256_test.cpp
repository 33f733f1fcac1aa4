// HMAC-SHA256 against RFC 4231's test cases (5, the truncated output, does not apply), and
// streaming in pieces against the one-shot form.
#include <crypto/hmac_sha256.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::string hex(const crypto::Digest& d) {
    char out[65];
    crypto::to_hex(d, out);
    return out;
}

std::vector<uint8_t> repeat(uint8_t byte, size_t n) { return std::vector<uint8_t>(n, byte); }

std::vector<uint8_t> bytes(std::string_view text) { return std::vector<uint8_t>(text.begin(), text.end()); }

std::string mac(const std::vector<uint8_t>& key, const std::vector<uint8_t>& data) {
    return hex(crypto::hmac_sha256(key, data));
}

} // namespace

TEST(HmacSha256, Rfc4231Case1) {
    EXPECT_EQ(mac(repeat(0x0b, 20), bytes("Hi There")),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(HmacSha256, Rfc4231Case2KeyShorterThanOutput) {
    EXPECT_EQ(mac(bytes("Jefe"), bytes("what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256, Rfc4231Case3) {
    EXPECT_EQ(mac(repeat(0xaa, 20), repeat(0xdd, 50)),
              "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256, Rfc4231Case4) {
    std::vector<uint8_t> key;
    for (uint8_t b = 0x01; b <= 0x19; ++b)
        key.push_back(b);
    EXPECT_EQ(mac(key, repeat(0xcd, 50)), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

TEST(HmacSha256, Rfc4231Case6KeyLongerThanBlock) {
    EXPECT_EQ(mac(repeat(0xaa, 131), bytes("Test Using Larger Than Block-Size Key - Hash Key First")),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, Rfc4231Case7KeyAndDataLongerThanBlock) {
    EXPECT_EQ(mac(repeat(0xaa, 131),
                  bytes("This is a test using a larger than block-size key and a larger than block-size data. "
                        "The key needs to be hashed before being used by the HMAC algorithm.")),
              "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, StreamingEqualsOneShot) {
    std::string msg;
    for (int i = 0; i < 517; ++i)
        msg.push_back(char('A' + (i * 7) % 53));
    const auto key = repeat(0x5a, 64); // exactly one block: neither hashed nor padded
    const std::string whole = mac(key, bytes(msg));
    for (size_t step : { 1, 5, 63, 64, 65, 200 }) {
        crypto::HmacSha256 h(key);
        for (size_t i = 0; i < msg.size(); i += step)
            h.update(std::string_view(msg).substr(i, step));
        EXPECT_EQ(hex(h.finish()), whole) << "step " << step;
    }
    EXPECT_NE(mac(repeat(0x5a, 65), bytes(msg)), whole) << "one more key byte is another key";
}

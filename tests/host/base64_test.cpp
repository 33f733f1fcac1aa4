// The streaming base64 reader the vector tools decode float32 batches with (lib/ktl/base64.h).
#include <gtest/gtest.h>

#include <string>

#include <ktl/base64.h>

namespace {

std::string decode_all(std::string_view text, size_t piece, bool* failed) {
    ktl::Base64Reader r(text);
    std::string out;
    uint8_t buf[7];
    for (int guard = 0; guard < 10000; ++guard) {
        size_t n = r.read(buf, piece < sizeof buf ? piece : sizeof buf);
        out.append(reinterpret_cast<char*>(buf), n);
        if (n == 0 || r.failed())
            break;
    }
    *failed = r.failed();
    return out;
}

TEST(Base64, Rfc4648Vectors) {
    // RFC 4648 section 10.
    const char* cases[][2] = { { "", "" },
                               { "Zg==", "f" },
                               { "Zm8=", "fo" },
                               { "Zm9v", "foo" },
                               { "Zm9vYg==", "foob" },
                               { "Zm9vYmE=", "fooba" },
                               { "Zm9vYmFy", "foobar" } };
    for (auto& c : cases) {
        for (size_t piece : { 1, 2, 3, 7 }) {
            bool failed = true;
            EXPECT_EQ(decode_all(c[0], piece, &failed), c[1]) << c[0] << " in pieces of " << piece;
            EXPECT_FALSE(failed) << c[0];
        }
        EXPECT_EQ(ktl::Base64Reader(c[0]).decoded_size(), std::string(c[1]).size()) << c[0];
    }
}

TEST(Base64, AllByteValuesRoundTrip) {
    // Encoded independently here, decoded by the reader.
    static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes;
    for (int i = 0; i < 256; ++i)
        bytes.push_back(static_cast<char>(i));
    std::string text;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
        size_t n = bytes.size() - i < 3 ? bytes.size() - i : 3;
        if (n > 1)
            v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
        if (n > 2)
            v |= uint8_t(bytes[i + 2]);
        text.push_back(kAlphabet[(v >> 18) & 63]);
        text.push_back(kAlphabet[(v >> 12) & 63]);
        text.push_back(n > 1 ? kAlphabet[(v >> 6) & 63] : '=');
        text.push_back(n > 2 ? kAlphabet[v & 63] : '=');
    }
    bool failed = true;
    EXPECT_EQ(decode_all(text, 5, &failed), bytes);
    EXPECT_FALSE(failed);
    EXPECT_EQ(ktl::Base64Reader(text).decoded_size(), bytes.size());
}

TEST(Base64, EncoderRoundTripsThroughTheReader) {
    std::string bytes;
    for (int i = 0; i < 1000; ++i) {
        bytes.push_back(static_cast<char>((i * 151 + 7) & 0xff));
        std::string text(ktl::base64_size(bytes.size()), '?');
        ASSERT_EQ(ktl::base64_encode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), text.data()),
                  text.size());
        bool failed = true;
        ASSERT_EQ(decode_all(text, 7, &failed), bytes) << bytes.size();
        ASSERT_FALSE(failed);
    }
    std::string foobar(ktl::base64_size(6), '?');
    ktl::base64_encode(reinterpret_cast<const uint8_t*>("foobar"), 6, foobar.data());
    EXPECT_EQ(foobar, "Zm9vYmFy");
    std::string fo(ktl::base64_size(2), '?');
    ktl::base64_encode(reinterpret_cast<const uint8_t*>("fo"), 2, fo.data());
    EXPECT_EQ(fo, "Zm8=");
}

TEST(Base64, MalformedInputFails) {
    for (const char* bad : { "Zm9v!", "Zm=v", "Z===", "Zg=", "Zm9v\n", "Zm9vYg=x", "=Zm9" }) {
        bool failed = false;
        decode_all(bad, 3, &failed);
        EXPECT_TRUE(failed) << bad;
    }
    EXPECT_EQ(ktl::Base64Reader("Zm9").decoded_size(), 0u);
}

} // namespace

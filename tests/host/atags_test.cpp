// ATAG lists as QEMU's raspi4b passes them without -dtb: the command line is found, and lists
// that are cut short, oversized or endless are refused without reading past the window.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <dtb/atags.h>

namespace {

std::vector<uint32_t> list_with(const std::string& cmdline) {
    std::vector<uint32_t> w = { 5, atags::kCore, 0, 4096, 0 }; // ATAG_CORE with its 3 data words
    w.push_back(4);                                            // ATAG_MEM
    w.push_back(0x54410002);
    w.push_back(0x3c000000);
    w.push_back(0);
    const size_t words = (cmdline.size() + 1 + 3) / 4;
    w.push_back(static_cast<uint32_t>(2 + words));
    w.push_back(atags::kCmdline);
    std::vector<uint32_t> text(words, 0);
    std::memcpy(text.data(), cmdline.c_str(), cmdline.size() + 1);
    w.insert(w.end(), text.begin(), text.end());
    w.push_back(0); // ATAG_NONE
    w.push_back(0);
    return w;
}

long read(const std::vector<uint32_t>& w, char* out, size_t cap, size_t bytes = 0) {
    return atags::cmdline(w.data(), bytes ? bytes : w.size() * 4, out, cap);
}

} // namespace

TEST(Atags, CommandLineFound) {
    auto w = list_with("semihosting mcp=serial");
    char out[64];
    ASSERT_EQ(read(w, out, sizeof out), 22);
    EXPECT_STREQ(out, "semihosting mcp=serial");
    EXPECT_TRUE(atags::is_atag_list(w.data(), w.size() * 4));
}

TEST(Atags, TruncatedToTheOutput) {
    auto w = list_with("0123456789");
    char out[5];
    EXPECT_EQ(read(w, out, sizeof out), 4);
    EXPECT_STREQ(out, "0123");
}

TEST(Atags, NoCommandLine) {
    std::vector<uint32_t> w = { 2, atags::kCore, 0, 0 };
    char out[8];
    EXPECT_EQ(read(w, out, sizeof out), -1);
}

TEST(Atags, MalformedListsRefused) {
    char out[64];
    std::vector<uint32_t> dtb = { 0xedfe0dd0, 0x100, 0, 0 }; // a device tree's magic, not ATAG_CORE
    EXPECT_FALSE(atags::is_atag_list(dtb.data(), dtb.size() * 4));
    EXPECT_EQ(read(dtb, out, sizeof out), -1);
    auto w = list_with("x=1");
    EXPECT_EQ(read(w, out, sizeof out, 16), -1) << "the window ends inside the list";
    auto big = list_with("x=1");
    big[5] = 100000; // ATAG_MEM claims more words than the window holds
    EXPECT_EQ(read(big, out, sizeof out), -1);
    auto small = list_with("x=1");
    small[5] = 1; // a tag shorter than its own header would loop for ever
    EXPECT_EQ(read(small, out, sizeof out), -1);
    std::vector<uint32_t> endless = { 2, atags::kCore };
    for (int i = 0; i < 200; ++i) {
        endless.push_back(2);
        endless.push_back(0x54410002);
    }
    EXPECT_EQ(read(endless, out, sizeof out), -1) << "bounded walk";
    EXPECT_EQ(atags::cmdline(nullptr, 64, out, sizeof out), -1);
}

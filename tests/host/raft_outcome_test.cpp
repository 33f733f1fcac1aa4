// The answer to a change made outside its group (lib/raft/outcome.h).
#include <raft/outcome.h>
#include <raft/read_index.h>

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

TEST(RaftOutcome, RoundTripsWithADeletesFlags) {
    bool flags[13] = {};
    flags[0] = flags[7] = flags[8] = flags[12] = true;
    const raftout::Outcome o { 0x0a000005'00000007ull, 42, 9, 0x0a000001u, flags };
    std::vector<uint8_t> buf(raftout::bytes(13));
    ASSERT_EQ(raftout::encode(o, buf), buf.size());
    EXPECT_TRUE(raftout::is_outcome(buf));
    EXPECT_FALSE(raftread::is_read_message(buf)) << "one channel carries both: they must not be taken for each other";
    bool back_flags[raftout::kMaxFlags];
    const auto back = raftout::decode(buf, back_flags);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->origin, o.origin);
    EXPECT_EQ(back->ticket, 42u);
    EXPECT_EQ(back->result, 9);
    EXPECT_EQ(back->leader, 0x0a000001u);
    ASSERT_EQ(back->absent.size(), 13u);
    for (size_t i = 0; i < 13; ++i)
        EXPECT_EQ(back->absent[i], flags[i]) << i;
    // A refusal (a negative result) and no flags.
    const raftout::Outcome refused { 1, 2, -11, 0, {} };
    uint8_t small[raftout::bytes(0)];
    ASSERT_EQ(raftout::encode(refused, small), sizeof small);
    const auto r = raftout::decode(small, back_flags);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->result, -11);
    EXPECT_TRUE(r->absent.empty());
    EXPECT_EQ(raftout::encode(o, std::span<uint8_t>(buf).first(buf.size() - 1)), 0u) << "no room";
}

TEST(RaftOutcome, WhatDoesNotAddUpIsRefused) {
    bool flags[10] = {};
    flags[9] = true;
    std::vector<uint8_t> buf(raftout::bytes(10));
    ASSERT_NE(raftout::encode({ 1, 2, 3, 4, flags }, buf), 0u);
    bool out[raftout::kMaxFlags];
    for (size_t n = 0; n < buf.size(); ++n)
        EXPECT_FALSE(raftout::decode(std::span<const uint8_t>(buf).first(n), out)) << n;
    auto longer = buf;
    longer.push_back(0);
    EXPECT_FALSE(raftout::decode(longer, out));
    for (size_t at : { 16, 18, 20, 36 }) {
        auto bad = buf;
        bad[at] ^= at == 36 ? 0x10 : 1; // (count 26 needs two more bytes of flags)
        EXPECT_FALSE(raftout::decode(bad, out)) << at;
    }
    auto stray = buf;
    stray.back() |= 0x80; // a bit past the tenth flag
    EXPECT_FALSE(raftout::decode(stray, out));
    bool few[4];
    EXPECT_FALSE(raftout::decode(buf, few)) << "more flags than the caller has room for";
    // Random bytes are never taken for an outcome with more flags than the message holds.
    std::mt19937 rng(35);
    for (int i = 0; i < 2000; ++i) {
        std::vector<uint8_t> junk(raftout::kHeader + raftout::kBody + rng() % 64);
        for (auto& b : junk)
            b = static_cast<uint8_t>(rng());
        junk[16] = raftout::kOutcome & 0xff;
        junk[17] = raftout::kOutcome >> 8;
        if (const auto d = raftout::decode(junk, out)) {
            EXPECT_EQ(raftout::bytes(static_cast<uint32_t>(d->absent.size())), junk.size());
        }
    }
    static bool many[raftout::kMaxFlags + 1];
    std::vector<uint8_t> big(raftout::kMaxBytes + 8);
    EXPECT_EQ(raftout::encode({ 1, 2, 3, 4, many }, big), 0u) << "more flags than a delete has ids";
}

} // namespace

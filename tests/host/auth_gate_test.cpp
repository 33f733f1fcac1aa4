// The authentication gate: a source gets its burst of failures, then only keys that recently
// authenticated from it pass, until the bucket refills; other sources are unaffected; the table
// of sources is bounded.
#include <mcp/policy/auth_gate.h>

#include <gtest/gtest.h>

namespace {
constexpr uint64_t kSec = 1'000'000'000;
}

TEST(AuthGate, FailuresThrottleASourceButNotItsGoodKeysNorOtherSources) {
    mcp::AuthGate gate({ 5, 1 });
    const uint64_t good = mcp::AuthGate::fingerprint("the-good-key"), bad = mcp::AuthGate::fingerprint("a-bad-key");
    uint64_t t = 10 * kSec;
    ASSERT_TRUE(gate.admit(7, good, t));
    gate.succeeded(7, good, t);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(gate.admit(7, bad, t)) << i;
        gate.failed(7, t);
    }
    EXPECT_FALSE(gate.admit(7, bad, t)) << "burst used up";
    EXPECT_FALSE(gate.admit(7, mcp::AuthGate::fingerprint("another-bad-key"), t)) << "any other key too";
    EXPECT_TRUE(gate.admit(7, good, t)) << "a key that authenticated from here passes";
    EXPECT_TRUE(gate.admit(8, bad, t)) << "another source has its own bucket";
    EXPECT_FALSE(gate.admit(7, bad, t + kSec / 2)) << "half a second refills half a failure";
    EXPECT_TRUE(gate.admit(7, bad, t + kSec)) << "one second refills one";
    gate.failed(7, t + kSec);
    EXPECT_FALSE(gate.admit(7, bad, t + kSec));
    EXPECT_TRUE(gate.admit(7, bad, t + 100 * kSec));
    EXPECT_EQ(gate.refused(), 4u);
    EXPECT_EQ(gate.failures(), 6u);
}

TEST(AuthGate, TheSourceTableIsBoundedAndForgetsTheLeastRecentlySeen) {
    mcp::AuthGate gate({ 1, 1 });
    const uint64_t bad = mcp::AuthGate::fingerprint("bad");
    gate.failed(1, 0);
    EXPECT_FALSE(gate.admit(1, bad, 0));
    for (uint64_t id = 100; id < 100 + mcp::AuthGate::kSources; ++id)
        gate.failed(id, 1 + id); // every slot taken by a newer source
    EXPECT_TRUE(gate.admit(1, bad, 1000)) << "source 1 was forgotten (a fresh bucket): bounded memory";
    EXPECT_FALSE(gate.admit(100 + mcp::AuthGate::kSources - 1, bad, 1000)) << "recent sources are kept";
}

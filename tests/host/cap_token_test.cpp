// Single-use execution tokens: work once, fail the second time, fail after expiry, fail (and
// burn) on a binding mismatch, and cannot be used as ordinary capabilities.
#include <cap/capability.h>

#include <gtest/gtest.h>

using cap::ObjectId;
using cap::ObjectType;
using cap::Rights;
using cap::Slot;
using ktl::Error;

namespace {

int g_tool;
int g_other;

constexpr uint64_t kBinding = 0x5eed'cafe'f00d'0001ull;

struct CapTokenFixture : ::testing::Test {
    cap::CapabilitySystem<4, 32, 2> cs;
    cap::CapTable* t = nullptr;
    ObjectId tool;

    void SetUp() override {
        t = cs.create_table().value();
        tool = cs.create_object(ObjectType::ExecToken, &g_tool).value();
    }
    Slot token(uint64_t expires = 1000, uint64_t binding = kBinding, uint64_t badge = 9) {
        auto s = cs.mint_token(*t, tool, Rights::Execute, badge, expires, binding);
        EXPECT_TRUE(s.ok()) << ktl::error_name(s.error());
        return s.value();
    }
    void TearDown() override { EXPECT_TRUE(cs.verify().ok()); }
};

} // namespace

TEST_F(CapTokenFixture, WorksOnceThenSlotIsEmpty) {
    Slot s = token();
    EXPECT_TRUE(cs.slot_info(*t, s).value().token);
    EXPECT_EQ(cs.slot_info(*t, s).value().expires_at_ns, 1000u);
    auto r = cs.redeem(*t, s, 999, kBinding);
    ASSERT_TRUE(r.ok()) << ktl::error_name(r.error());
    EXPECT_EQ(r->ptr, &g_tool);
    EXPECT_EQ(r->object, tool);
    EXPECT_EQ(r->type, ObjectType::ExecToken);
    EXPECT_EQ(r->rights, Rights::Execute);
    EXPECT_EQ(r->badge, 9u);
    EXPECT_EQ(cs.redeem(*t, s, 999, kBinding).error(), Error::BadHandle);
    EXPECT_EQ(cs.slot_info(*t, s).error(), Error::BadHandle);
    EXPECT_EQ(cs.live_nodes(), 0u);
}

TEST_F(CapTokenFixture, ExpiredTokenFailsAndIsConsumed) {
    Slot s = token(1000);
    EXPECT_EQ(cs.redeem(*t, s, 1000, kBinding).error(), Error::TimedOut); // the deadline is exclusive
    EXPECT_EQ(cs.redeem(*t, s, 10, kBinding).error(), Error::BadHandle);
    Slot late = token(1000);
    EXPECT_EQ(cs.redeem(*t, late, ~0ull, kBinding).error(), Error::TimedOut);
    EXPECT_EQ(cs.live_nodes(), 0u);
}

TEST_F(CapTokenFixture, BindingMismatchFailsClosed) {
    Slot s = token();
    EXPECT_EQ(cs.redeem(*t, s, 1, kBinding ^ 1).error(), Error::AccessDenied);
    // A thief who learned the right binding afterwards cannot retry.
    EXPECT_EQ(cs.redeem(*t, s, 1, kBinding).error(), Error::BadHandle);
    EXPECT_EQ(cs.live_nodes(), 0u);
}

TEST_F(CapTokenFixture, DestroyedObjectMakesTokenUseless) {
    Slot s = token();
    ASSERT_TRUE(cs.destroy_object(tool).ok());
    EXPECT_EQ(cs.redeem(*t, s, 1, kBinding).error(), Error::BadHandle);
    EXPECT_EQ(cs.slot_info(*t, s).error(), Error::BadHandle); // consumed all the same
}

TEST_F(CapTokenFixture, TokensAreNotOrdinaryCapabilities) {
    Slot s = token();
    EXPECT_EQ(cs.lookup(*t, s, ObjectType::ExecToken, Rights::None).error(), Error::AccessDenied);
    EXPECT_EQ(cs.mint(*t, s, *t, Rights::Execute, 0).error(), Error::AccessDenied);
    EXPECT_EQ(cs.transfer(*t, s, *t).error(), Error::AccessDenied);
    EXPECT_EQ(cs.revoke(*t, s).error(), Error::AccessDenied);
    // None of that consumed it.
    EXPECT_TRUE(cs.redeem(*t, s, 0, kBinding).ok());
}

TEST_F(CapTokenFixture, RedeemOnOrdinaryCapabilityIsRefusedWithoutConsuming) {
    Slot s = cs.grant_root(*t, tool, Rights::Execute, 0).value();
    EXPECT_EQ(cs.redeem(*t, s, 0, 0).error(), Error::InvalidArgs);
    EXPECT_TRUE(cs.lookup(*t, s, ObjectType::ExecToken, Rights::Execute).ok());
    EXPECT_EQ(cs.redeem(*t, 50, 0, 0).error(), Error::BadHandle);
}

TEST_F(CapTokenFixture, MintTokenValidates) {
    EXPECT_EQ(cs.mint_token(*t, tool, Rights::Execute | Rights::Grant, 0, 10, 1).error(), Error::InvalidArgs);
    EXPECT_EQ(cs.mint_token(*t, tool, Rights::Revoke, 0, 10, 1).error(), Error::InvalidArgs);
    EXPECT_EQ(cs.mint_token(*t, tool, Rights::Write, 0, 10, 1).error(), Error::InvalidArgs); // not a default right
    EXPECT_EQ(cs.mint_token(*t, ObjectId{}, Rights::Execute, 0, 10, 1).error(), Error::BadHandle);
    // Any object type may be named; tokens follow the object's default rights.
    ObjectId region = cs.create_object(ObjectType::Region, &g_other).value();
    Slot s = cs.mint_token(*t, region, Rights::Read | Rights::Write, 0, 10, 1).value();
    auto r = cs.redeem(*t, s, 0, 1);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->type, ObjectType::Region);
    EXPECT_EQ(cs.live_nodes(), 0u);
}

TEST_F(CapTokenFixture, DestroyTableBurnsOutstandingTokens) {
    token();
    token();
    EXPECT_EQ(cs.live_nodes(), 2u);
    EXPECT_EQ(cs.destroy_table(*t).value(), 2u);
    EXPECT_EQ(cs.free_nodes(), cs.node_capacity());
}

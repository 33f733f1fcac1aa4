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
    EXPECT_EQ(cs.mint_token(*t, ObjectId {}, Rights::Execute, 0, 10, 1).error(), Error::BadHandle);
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

// Tokens issued from a capability (issue_token): children of the issuer's capability, so
// revoking or removing it reaches the token and what the token became; a redeemed token is an
// ordinary capability in the same slot (so a second redeem finds no token: consumed), with the
// token's rights only, and it dies at the token's deadline.
TEST(CapIssuedToken, DerivedFromTheIssuerRevocableAndExpiring) {
    cap::CapabilitySystem<4, 32, 3> cs;
    cap::CapTable* bridge = cs.create_table().value();
    cap::CapTable* tool = cs.create_table().value();
    int store;
    ObjectId obj = cs.create_object(ObjectType::Region, &store).value();
    Slot src = cs.grant_root(*bridge, obj, Rights::Read | Rights::Write | Rights::Grant | Rights::Revoke, 0).value();

    EXPECT_EQ(cs.issue_token(*bridge, src, *tool, Rights::Read | Rights::Grant, 100, kBinding, 0).error(),
              Error::InvalidArgs);
    EXPECT_EQ(cs.issue_token(*bridge, src, *tool, Rights::Execute, 100, kBinding, 0).error(), Error::AccessDenied)
        << "never more than the issuer holds";
    Slot ro = cs.mint(*bridge, src, *bridge, Rights::Read, 0).value();
    EXPECT_EQ(cs.issue_token(*bridge, ro, *tool, Rights::Read, 100, kBinding, 0).error(), Error::AccessDenied)
        << "issuing needs Grant";

    Slot tok = cs.issue_token(*bridge, src, *tool, Rights::Read, 100, kBinding, 0).value();
    EXPECT_EQ(cs.slot_info(*tool, tok).value().parent_slot, src);
    EXPECT_EQ(cs.lookup(*tool, tok, ObjectType::Region, Rights::Read, 1).error(), Error::AccessDenied)
        << "a token is no capability";
    auto r = cs.redeem(*tool, tok, 50, kBinding);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->kept);
    EXPECT_EQ(r->rights, Rights::Read);
    EXPECT_FALSE(cs.slot_info(*tool, tok).value().token) << "consumed: the slot holds an ordinary capability now";
    EXPECT_EQ(cs.redeem(*tool, tok, 50, kBinding).error(), Error::InvalidArgs) << "no second redeem";
    EXPECT_TRUE(cs.lookup(*tool, tok, ObjectType::Region, Rights::Read, 99).ok());
    EXPECT_EQ(cs.lookup(*tool, tok, ObjectType::Region, Rights::Write, 99).error(), Error::AccessDenied);
    EXPECT_EQ(cs.lookup(*tool, tok, ObjectType::Region, Rights::Read, 100).error(), Error::TimedOut)
        << "dies at the deadline";
    EXPECT_EQ(cs.mint(*tool, tok, *tool, Rights::Read, 0).error(), Error::AccessDenied)
        << "no Grant: cannot pass it on";

    // Revoking the issuer reaches the redeemed capability; so does removing the issuer's.
    Slot tok2 = cs.issue_token(*bridge, src, *tool, Rights::Write, 100, kBinding, 0).value();
    ASSERT_TRUE(cs.redeem(*tool, tok2, 1, kBinding).ok());
    Slot tok3 = cs.issue_token(*bridge, src, *tool, Rights::Read, 100, kBinding, 0).value();
    EXPECT_GE(cs.revoke(*bridge, src).value(), 3u);
    EXPECT_EQ(cs.lookup(*tool, tok2, ObjectType::Region, Rights::Write, 1).error(), Error::BadHandle);
    EXPECT_EQ(cs.redeem(*tool, tok3, 1, kBinding).error(), Error::BadHandle) << "an unredeemed token goes too";

    // A refused redeem burns a derived token as it does a root one.
    Slot bad = cs.issue_token(*bridge, src, *tool, Rights::Read, 100, kBinding, 0).value();
    EXPECT_EQ(cs.redeem(*tool, bad, 1, kBinding ^ 1).error(), Error::AccessDenied);
    EXPECT_EQ(cs.slot_info(*tool, bad).error(), Error::BadHandle);
    Slot late = cs.issue_token(*bridge, src, *tool, Rights::Read, 100, kBinding, 0).value();
    EXPECT_EQ(cs.redeem(*tool, late, 100, kBinding).error(), Error::TimedOut);
    EXPECT_TRUE(cs.verify().ok());
}

// Unit tests for lib/cap: registry, tables, grant/mint/revoke/remove/transfer/lookup and their
// errors, introspection and verify(). Tokens: cap_token_test.cpp; properties: cap_property_test.cpp.
#include <cap/capability.h>

#include <gtest/gtest.h>

#include <array>
#include <vector>
#include <cstdint>
#include <limits>

using cap::ObjectId;
using cap::ObjectType;
using cap::Rights;
using cap::Slot;
using ktl::Error;

namespace {

constexpr Rights kAll = cap::rights::kAllDefined;
constexpr Rights kQueueAll = cap::default_rights(ObjectType::Queue);
constexpr Rights R = Rights::Read;
constexpr Rights W = Rights::Write;
constexpr Rights G = Rights::Grant;
constexpr Rights V = Rights::Revoke;

int g_objects[16];

struct CapFixture : ::testing::Test {
    cap::CapabilitySystem<8, 128, 4> cs;
    cap::CapTable* a = nullptr;
    cap::CapTable* b = nullptr;
    ObjectId task;
    ObjectId queue;

    void SetUp() override {
        a = cs.create_table().value();
        b = cs.create_table().value();
        ASSERT_NE(a, nullptr);
        ASSERT_NE(b, nullptr);
        task = cs.create_object(ObjectType::Task, &g_objects[0]).value();
        queue = cs.create_object(ObjectType::Queue, &g_objects[1]).value();
    }
    Slot root(cap::CapTable& t, ObjectId o, Rights r, uint64_t badge = 0) {
        auto s = cs.grant_root(t, o, r, badge);
        EXPECT_TRUE(s.ok()) << ktl::error_name(s.error());
        return s.value();
    }
    void TearDown() override { EXPECT_TRUE(cs.verify().ok()); }
};

} // namespace

TEST(CapRights, DefaultsAndHelpers) {
    EXPECT_TRUE(cap::has_rights(R | W, R));
    EXPECT_FALSE(cap::has_rights(R, R | W));
    EXPECT_TRUE(cap::has_rights(R, Rights::None));
    EXPECT_EQ(cap::default_rights(ObjectType::None), Rights::None);
    EXPECT_EQ(cap::default_rights(ObjectType::Introspection) & W, Rights::None);
    for (uint32_t t = 1; t < cap::kObjectTypeCount; ++t) {
        EXPECT_TRUE(cap::has_rights(cap::default_rights(ObjectType(t)), G)) << cap::type_name(ObjectType(t));
        EXPECT_STRNE(cap::type_name(ObjectType(t)), "?");
    }
    EXPECT_STREQ(cap::type_name(ObjectType::NetEndpoint), "NetEndpoint");
    EXPECT_FALSE(cap::is_valid_type(ObjectType::None));
    EXPECT_FALSE(cap::is_valid_type(ObjectType(200)));
    EXPECT_STREQ(ktl::error_name(Error::WrongType), "wrong_type");
}

// kernel_caps printed bit 2 as "grant" and bit 3 as "revoke", and never named bit 4: names
// are looked up by bit, so each must sit at its right's bit.
TEST(CapRights, EveryRightIsNamedAtItsOwnBit) {
    const std::pair<cap::Rights, const char*> expected[] = {
        { cap::Rights::Read, "read" },     { cap::Rights::Write, "write" },   { cap::Rights::Execute, "execute" },
        { cap::Rights::Grant, "grant" },   { cap::Rights::Revoke, "revoke" }, { cap::Rights::Create, "create" },
        { cap::Rights::Import, "import" }, { cap::Rights::Drop, "drop" }
    };
    ASSERT_EQ(cap::kRightCount, std::size(expected));
    uint32_t all = 0;
    for (const auto& [right, name] : expected) {
        uint32_t bit = static_cast<uint32_t>(__builtin_ctz(static_cast<uint32_t>(right)));
        EXPECT_STREQ(cap::kRightNames[bit], name);
        all |= static_cast<uint32_t>(right);
    }
    EXPECT_EQ(all, static_cast<uint32_t>(cap::rights::kAllDefined | cap::rights::kStoreOps))
        << "a defined right without a name";
}

TEST(CapRegistry, CreateDestroyReuseWithNewGeneration) {
    std::array<cap::ObjectEntry, 2> storage;
    cap::ObjectRegistry reg(storage);
    EXPECT_EQ(reg.create(ObjectType::None, &g_objects[0]).error(), Error::InvalidArgs);
    EXPECT_EQ(reg.create(ObjectType::Task, nullptr).error(), Error::InvalidArgs);
    ObjectId x = reg.create(ObjectType::Task, &g_objects[0]).value();
    ObjectId y = reg.create(ObjectType::Timer, &g_objects[1]).value();
    EXPECT_EQ(reg.create(ObjectType::Timer, &g_objects[2]).error(), Error::Full);
    EXPECT_EQ(reg.live_count(), 2u);
    EXPECT_EQ(reg.ptr(x), &g_objects[0]);
    EXPECT_EQ(reg.type(y), ObjectType::Timer);
    ASSERT_TRUE(reg.destroy(x).ok());
    EXPECT_EQ(reg.destroy(x).error(), Error::BadHandle);
    EXPECT_EQ(reg.ptr(x), nullptr);
    EXPECT_EQ(reg.type(x), ObjectType::None);
    ObjectId z = reg.create(ObjectType::Region, &g_objects[2]).value();
    EXPECT_EQ(z.index, x.index);           // the slot is reused...
    EXPECT_NE(z.generation, x.generation); // ...under a new generation
    EXPECT_FALSE(reg.is_live(x));
    EXPECT_TRUE(reg.is_live(z));
    EXPECT_EQ(ObjectId::from_raw(z.raw()), z);
    EXPECT_FALSE(reg.is_live(ObjectId {}));
    EXPECT_FALSE(reg.is_live(ObjectId { 7, 1 }));
}

// next_live walks the slots handed out so far, every live object once, whichever were freed.
TEST(CapRegistry, NextLiveVisitsEveryLiveObjectOnce) {
    std::array<cap::ObjectEntry, 4> storage;
    cap::ObjectRegistry reg(storage);
    auto walk = [&reg] {
        std::vector<uint32_t> seen;
        cap::ObjectRegistry::Live o;
        for (uint32_t cursor = 0; reg.next_live(&cursor, &o);)
            seen.push_back(o.id.index);
        return seen;
    };
    EXPECT_TRUE(walk().empty());
    ObjectId a = reg.create(ObjectType::Task, &g_objects[0], 3).value();
    ObjectId b = reg.create(ObjectType::Timer, &g_objects[1]).value();
    ObjectId c = reg.create(ObjectType::Region, &g_objects[2]).value();
    EXPECT_EQ(walk(), (std::vector<uint32_t> { a.index, b.index, c.index }));
    ASSERT_TRUE(reg.destroy(c).ok());
    ASSERT_TRUE(reg.destroy(a).ok());
    EXPECT_EQ(walk(), (std::vector<uint32_t> { b.index }));
    ObjectId d = reg.create(ObjectType::Task, &g_objects[0]).value(); // a freed slot comes back first
    ObjectId e = reg.create(ObjectType::Task, &g_objects[1]).value();
    ObjectId f = reg.create(ObjectType::Task, &g_objects[2]).value(); // the last, never used before
    EXPECT_EQ(walk().size(), 4u);
    EXPECT_EQ(f.index, 3u);
    (void)d;
    (void)e;
}

TEST(CapRegistry, ExhaustedGenerationRetiresSlot) {
    std::array<cap::ObjectEntry, 1> storage;
    cap::ObjectRegistry reg(storage);
    storage[0].generation = std::numeric_limits<uint32_t>::max();
    ObjectId last = reg.create(ObjectType::Task, &g_objects[0]).value();
    ASSERT_TRUE(reg.destroy(last).ok());
    // Reuse would wrap to a generation a stale capability may hold: the slot is gone for good.
    EXPECT_EQ(reg.create(ObjectType::Task, &g_objects[0]).error(), Error::Full);
    EXPECT_FALSE(reg.is_live(last));
}

TEST_F(CapFixture, TablesAreBoundedAndReused) {
    auto c = cs.create_table();
    auto d = cs.create_table();
    ASSERT_TRUE(c.ok() && d.ok());
    EXPECT_EQ(cs.create_table().error(), Error::Full);
    EXPECT_EQ(cs.live_tables(), 4u);
    uint16_t id = c.value()->id();
    EXPECT_EQ(cs.table_by_id(id), c.value());
    ASSERT_TRUE(cs.destroy_table(*c.value()).ok());
    EXPECT_EQ(cs.destroy_table(*c.value()).error(), Error::BadHandle);
    EXPECT_EQ(cs.table_by_id(id), nullptr);
    EXPECT_EQ(cs.grant_root(*c.value(), task, R, 0).error(), Error::BadHandle);
    EXPECT_EQ(cs.create_table().value(), c.value());
}

TEST_F(CapFixture, GrantRootErrors) {
    EXPECT_EQ(root(*a, task, R | W), 0u);
    EXPECT_EQ(root(*a, task, R), 1u);
    EXPECT_EQ(cs.grant_root(*a, ObjectId {}, R, 0).error(), Error::BadHandle);
    EXPECT_EQ(cs.grant_root(*a, ObjectId { task.index, task.generation + 1 }, R, 0).error(), Error::BadHandle);
    // Introspection objects carry no Write by default; bits past the defined ones are refused.
    ObjectId intro = cs.create_object(ObjectType::Introspection, &g_objects[2]).value();
    EXPECT_EQ(cs.grant_root(*a, intro, W, 0).error(), Error::InvalidArgs);
    EXPECT_EQ(cs.grant_root(*a, task, Rights(1u << 9), 0).error(), Error::InvalidArgs);
    while (a->used() < cap::kCapSlots)
        root(*a, task, R);
    EXPECT_EQ(cs.grant_root(*a, task, R, 0).error(), Error::Full);
    // Remove frees the slot: the lowest free slot is reused first.
    ASSERT_EQ(cs.remove(*a, 5).value(), 1u);
    EXPECT_EQ(root(*a, task, R), 5u);
}

TEST(CapPool, NodePoolExhaustionIsNoMemory) {
    cap::CapabilitySystem<2, 3, 2> cs;
    cap::CapTable* t = cs.create_table().value();
    ObjectId o = cs.create_object(ObjectType::Region, &g_objects[0]).value();
    Slot s = cs.grant_root(*t, o, kAll, 0).value();
    ASSERT_TRUE(cs.mint(*t, s, *t, kAll, 0).ok());
    ASSERT_TRUE(cs.grant_root(*t, o, R, 0).ok());
    EXPECT_EQ(cs.free_nodes(), 0u);
    EXPECT_EQ(cs.grant_root(*t, o, R, 0).error(), Error::NoMemory);
    EXPECT_EQ(cs.mint(*t, s, *t, R, 0).error(), Error::NoMemory);
    EXPECT_EQ(cs.mint_token(*t, o, R, 0, 10, 1).error(), Error::NoMemory);
    ASSERT_TRUE(cs.destroy_table(*t).ok());
    EXPECT_EQ(cs.free_nodes(), 3u);
    EXPECT_TRUE(cs.verify().ok());
}

TEST_F(CapFixture, MintMasksRightsAndKeepsObject) {
    Slot s = root(*a, task, R | W | G);
    auto c = cs.mint(*a, s, *b, R | V | Rights::Execute, 0);
    ASSERT_TRUE(c.ok());
    auto info = cs.slot_info(*b, c.value()).value();
    EXPECT_EQ(info.rights, R); // Revoke/Execute were never held: masked out, not added
    EXPECT_EQ(info.object, task);
    EXPECT_EQ(info.type, ObjectType::Task);
    EXPECT_EQ(info.parent_table, a->id());
    EXPECT_EQ(info.parent_slot, s);
    EXPECT_EQ(cs.slot_info(*a, s).value().children, 1u);
    // Same table as destination works too.
    EXPECT_EQ(cs.mint(*a, s, *a, kAll, 0).value(), 1u);
}

TEST_F(CapFixture, MintErrors) {
    Slot nogrant = root(*a, task, R | W);
    EXPECT_EQ(cs.mint(*a, nogrant, *b, R, 0).error(), Error::AccessDenied);
    EXPECT_EQ(cs.mint(*a, 9, *b, R, 0).error(), Error::BadHandle);
    EXPECT_EQ(cs.mint(*a, cap::kCapSlots, *b, R, 0).error(), Error::BadHandle);
    EXPECT_EQ(cs.mint(*a, cap::kNoSlot, *b, R, 0).error(), Error::BadHandle);
    Slot g = root(*a, task, R | G);
    // A child without Grant cannot mint further.
    Slot c = cs.mint(*a, g, *b, R, 0).value();
    EXPECT_EQ(cs.mint(*b, c, *a, R, 0).error(), Error::AccessDenied);
    // Destination full.
    while (b->used() < cap::kCapSlots)
        root(*b, queue, R);
    EXPECT_EQ(cs.mint(*a, g, *b, R, 0).error(), Error::Full);
    // Destroyed destination table.
    auto t = cs.create_table().value();
    ASSERT_TRUE(cs.destroy_table(*t).ok());
    EXPECT_EQ(cs.mint(*a, g, *t, R, 0).error(), Error::BadHandle);
    // A failed mint changed nothing.
    EXPECT_EQ(cs.slot_info(*a, g).value().children, 1u);
}

TEST_F(CapFixture, BadgesSurviveDerivationAndCannotBeChanged) {
    Slot plain = root(*a, queue, kQueueAll);
    Slot badged = cs.mint(*a, plain, *b, kAll, 42).value();
    EXPECT_EQ(cs.slot_info(*b, badged).value().badge, 42u);
    // Inherited through an unbadged request or the same badge; a different badge is refused.
    Slot g1 = cs.mint(*b, badged, *a, kAll, 0).value();
    EXPECT_EQ(cs.slot_info(*a, g1).value().badge, 42u);
    Slot g2 = cs.mint(*a, g1, *b, R | G, 42).value();
    EXPECT_EQ(cs.slot_info(*b, g2).value().badge, 42u);
    EXPECT_EQ(cs.mint(*b, badged, *a, kAll, 7).error(), Error::InvalidArgs);
    EXPECT_EQ(cs.lookup(*b, g2, ObjectType::Queue, R).value().badge, 42u);
    // The unbadged root may still hand out other badges.
    Slot other = cs.mint(*a, plain, *b, R, 7).value();
    EXPECT_EQ(cs.slot_info(*b, other).value().badge, 7u);
    // A root may be badged from the start.
    Slot br = root(*a, task, R, 99);
    EXPECT_EQ(cs.lookup(*a, br, ObjectType::Task, R).value().badge, 99u);
}

TEST_F(CapFixture, RevokeIsTransitiveAcrossTables) {
    Slot r = root(*a, task, kAll);
    Slot c1 = cs.mint(*a, r, *b, kAll, 0).value();
    Slot c2 = cs.mint(*b, c1, *a, kAll, 0).value();
    Slot c3 = cs.mint(*a, c2, *b, R, 0).value();
    Slot sib = cs.mint(*a, r, *a, R, 0).value();
    Slot unrelated = root(*b, task, kAll);
    EXPECT_EQ(cs.live_nodes(), 6u);
    EXPECT_EQ(cs.revoke(*a, r).value(), 4u);
    EXPECT_TRUE(cs.lookup(*a, r, ObjectType::Task, kAll).ok()); // the capability itself stays
    for (auto [t, s] : { std::pair { b, c1 }, { a, c2 }, { b, c3 }, { a, sib } })
        EXPECT_EQ(cs.lookup(*t, s, ObjectType::Task, Rights::None).error(), Error::BadHandle);
    EXPECT_TRUE(cs.lookup(*b, unrelated, ObjectType::Task, R).ok());
    EXPECT_EQ(cs.live_nodes(), 2u);
    EXPECT_EQ(cs.revoke(*a, r).value(), 0u);
}

TEST_F(CapFixture, RevokeNeedsRevokeRight) {
    Slot r = root(*a, task, R | G);
    Slot c = cs.mint(*a, r, *b, R, 0).value();
    EXPECT_EQ(cs.revoke(*a, r).error(), Error::AccessDenied);
    EXPECT_EQ(cs.revoke(*a, 30).error(), Error::BadHandle);
    EXPECT_TRUE(cs.lookup(*b, c, ObjectType::Task, R).ok());
    // A derived capability may revoke its own subtree only if Revoke was passed down.
    Slot full = root(*a, queue, kQueueAll);
    Slot mid = cs.mint(*a, full, *b, G | V, 0).value();
    Slot leaf = cs.mint(*b, mid, *a, Rights::None, 0).value();
    EXPECT_EQ(cs.revoke(*b, mid).value(), 1u);
    EXPECT_EQ(cs.slot_info(*a, leaf).error(), Error::BadHandle);
}

TEST_F(CapFixture, RemoveDeletesCapabilityAndSubtree) {
    Slot r = root(*a, task, kAll);
    Slot c1 = cs.mint(*a, r, *b, kAll, 0).value();
    Slot c2 = cs.mint(*b, c1, *b, R, 0).value();
    Slot keep = cs.mint(*a, r, *a, R, 0).value();
    EXPECT_EQ(cs.remove(*b, c1).value(), 2u);
    EXPECT_EQ(cs.slot_info(*b, c1).error(), Error::BadHandle);
    EXPECT_EQ(cs.slot_info(*b, c2).error(), Error::BadHandle);
    EXPECT_TRUE(cs.slot_info(*a, keep).ok());
    EXPECT_EQ(cs.slot_info(*a, r).value().children, 1u);
    EXPECT_EQ(cs.remove(*b, c1).error(), Error::BadHandle);
    EXPECT_EQ(cs.remove(*a, r).value(), 2u);
    EXPECT_EQ(cs.live_nodes(), 0u);
}

TEST_F(CapFixture, DeepChainIsRemovedIteratively) {
    cap::CapabilitySystem<2, 4096, 64> big;
    std::array<cap::CapTable*, 64> tables {};
    for (auto& t : tables)
        t = big.create_table().value();
    ObjectId o = big.create_object(ObjectType::Region, &g_objects[0]).value();
    Slot s = big.grant_root(*tables[0], o, kAll, 0).value();
    cap::CapTable* cur = tables[0];
    // A 4000-deep chain spread over all tables: recursion would be the wrong tool here.
    for (int i = 1; i < 4000; ++i) {
        cap::CapTable* next = tables[size_t(i) % tables.size()];
        s = big.mint(*cur, s, *next, kAll, 0).value();
        cur = next;
    }
    EXPECT_EQ(big.live_nodes(), 4000u);
    EXPECT_TRUE(big.verify().ok());
    EXPECT_EQ(big.revoke(*tables[0], 0).value(), 3999u);
    EXPECT_EQ(big.live_nodes(), 1u);
    EXPECT_TRUE(big.verify().ok());
}

TEST_F(CapFixture, TransferMovesWithoutLeavingTheTree) {
    Slot r = root(*a, task, kAll);
    Slot c = cs.mint(*a, r, *a, R | G, 0).value();
    Slot moved = cs.transfer(*a, c, *b).value();
    EXPECT_EQ(cs.slot_info(*a, c).error(), Error::BadHandle);
    auto info = cs.slot_info(*b, moved).value();
    EXPECT_EQ(info.rights, R | G);
    EXPECT_EQ(info.parent_slot, r);
    // Still a descendant: revoking the parent reaches it in its new table.
    EXPECT_EQ(cs.revoke(*a, r).value(), 1u);
    EXPECT_EQ(cs.slot_info(*b, moved).error(), Error::BadHandle);
    Slot nogrant = cs.mint(*a, r, *a, R, 0).value();
    EXPECT_EQ(cs.transfer(*a, nogrant, *b).error(), Error::AccessDenied);
    EXPECT_EQ(cs.transfer(*a, 40, *b).error(), Error::BadHandle);
    while (b->used() < cap::kCapSlots)
        root(*b, queue, R);
    EXPECT_EQ(cs.transfer(*a, r, *b).error(), Error::Full);
    EXPECT_TRUE(cs.slot_info(*a, r).ok());
}

TEST_F(CapFixture, LookupChecksSlotObjectTypeRights) {
    Slot s = root(*a, queue, R | W, 5);
    auto ok = cs.lookup(*a, s, ObjectType::Queue, R | W);
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(ok->ptr, &g_objects[1]);
    EXPECT_EQ(ok->object, queue);
    EXPECT_EQ(ok->rights, R | W);
    EXPECT_EQ(ok->badge, 5u);
    EXPECT_EQ(cs.lookup(*a, s + 1, ObjectType::Queue, R).error(), Error::BadHandle);
    EXPECT_EQ(cs.lookup(*a, cap::kCapSlots, ObjectType::Queue, R).error(), Error::BadHandle);
    EXPECT_EQ(cs.lookup(*b, s, ObjectType::Queue, R).error(), Error::BadHandle);
    EXPECT_EQ(cs.lookup(*a, s, ObjectType::Task, R).error(), Error::WrongType);
    EXPECT_EQ(cs.lookup(*a, s, ObjectType::Queue, R | Rights::Execute).error(), Error::AccessDenied);
    EXPECT_EQ(cs.lookup(*a, s, ObjectType::Queue, G).error(), Error::AccessDenied);
}

TEST_F(CapFixture, DestroyedObjectIsUnreachableEvenAfterSlotReuse) {
    Slot r = root(*a, task, kAll);
    Slot c = cs.mint(*a, r, *b, kAll, 3).value();
    ASSERT_TRUE(cs.destroy_object(task).ok());
    EXPECT_EQ(cs.destroy_object(task).error(), Error::BadHandle);
    EXPECT_EQ(cs.object_ptr(task), nullptr);
    EXPECT_EQ(cs.lookup(*a, r, ObjectType::Task, Rights::None).error(), Error::BadHandle);
    EXPECT_EQ(cs.lookup(*b, c, ObjectType::Task, Rights::None).error(), Error::BadHandle);
    EXPECT_EQ(cs.mint(*a, r, *a, R, 0).error(), Error::BadHandle);
    EXPECT_FALSE(cs.slot_info(*b, c).value().object_live);
    // The registry slot is reused by a new object of the same type.
    ObjectId fresh = cs.create_object(ObjectType::Task, &g_objects[5]).value();
    ASSERT_EQ(fresh.index, task.index);
    EXPECT_EQ(cs.lookup(*a, r, ObjectType::Task, Rights::None).error(), Error::BadHandle);
    EXPECT_EQ(cs.lookup(*b, c, ObjectType::Task, Rights::None).error(), Error::BadHandle);
    Slot n = root(*b, fresh, R);
    EXPECT_EQ(cs.lookup(*b, n, ObjectType::Task, R)->ptr, &g_objects[5]);
    // Dead capabilities can still be cleaned up.
    EXPECT_EQ(cs.revoke(*a, r).value(), 1u);
    EXPECT_EQ(cs.remove(*a, r).value(), 1u);
}

TEST_F(CapFixture, DestroyTableRemovesSubtreesInOtherTables) {
    Slot r = root(*a, task, kAll);
    Slot c = cs.mint(*a, r, *b, kAll, 0).value();
    Slot own = cs.mint(*a, r, *a, kAll, 0).value();
    (void)own;
    Slot rb = root(*b, queue, kQueueAll);
    Slot back = cs.mint(*b, rb, *a, R, 0).value();
    EXPECT_EQ(cs.destroy_table(*a).value(), 4u); // r, c, own, back
    EXPECT_EQ(cs.slot_info(*b, c).error(), Error::BadHandle);
    EXPECT_EQ(cs.slot_info(*b, rb).value().children, 0u);
    (void)back;
    EXPECT_EQ(cs.live_nodes(), 1u);
}

TEST_F(CapFixture, ListSlotsReportsOccupiedSlots) {
    Slot r = root(*a, task, kAll, 1);
    Slot c = cs.mint(*a, r, *a, R, 0).value();
    Slot q = root(*a, queue, W);
    ASSERT_TRUE(cs.remove(*a, c).ok());
    Slot c2 = cs.mint(*a, r, *b, R | G, 0).value();
    std::array<cap::SlotInfo, 8> out;
    ASSERT_EQ(cs.list_slots(*a, out), 2u);
    EXPECT_EQ(out[0].slot, r);
    EXPECT_EQ(out[0].badge, 1u);
    EXPECT_EQ(out[0].children, 1u);
    EXPECT_EQ(out[0].parent_table, cap::kNoTable);
    EXPECT_EQ(out[1].slot, q);
    EXPECT_EQ(out[1].type, ObjectType::Queue);
    EXPECT_EQ(out[1].rights, W);
    EXPECT_TRUE(out[1].object_live);
    EXPECT_FALSE(out[1].token);
    // A short buffer still reports the total.
    EXPECT_EQ(cs.list_slots(*a, std::span(out).first(1)), 2u);
    EXPECT_EQ(cs.list_slots(*b, out), 1u);
    EXPECT_EQ(out[0].slot, c2);
    EXPECT_EQ(out[0].parent_slot, r);
    EXPECT_EQ(cs.live_nodes(), 3u);
    EXPECT_EQ(cs.free_nodes() + cs.live_nodes(), cs.node_capacity());
}

TEST(CapVerify, DetectsCorruption) {
    std::array<cap::ObjectEntry, 2> objects;
    std::array<cap::CapNode, 8> nodes;
    std::array<cap::CapTable, 2> tables;
    auto build = [&](cap::CapabilitySpace& cs) {
        cap::CapTable* t = cs.create_table().value();
        ObjectId o = cs.create_object(ObjectType::Task, &g_objects[0]).value();
        Slot r = cs.grant_root(*t, o, R | G, 7).value();
        (void)cs.mint(*t, r, *t, R, 0).value(); // node 1, child of node 0
        ASSERT_TRUE(cs.verify().ok());
    };
    cap::CapabilitySpace cs(objects, nodes, tables);
    build(cs);
    nodes[1].rights = R | W; // escalated beyond the parent
    EXPECT_EQ(cs.verify().error(), Error::Corrupt);

    cs.reset(objects, nodes, tables);
    build(cs);
    nodes[1].badge = 8; // badge changed under derivation
    EXPECT_EQ(cs.verify().error(), Error::Corrupt);

    cs.reset(objects, nodes, tables);
    build(cs);
    nodes[0].parent = 1; // cycle
    EXPECT_EQ(cs.verify().error(), Error::Corrupt);

    cs.reset(objects, nodes, tables);
    build(cs);
    nodes[1].slot = 5; // broken back-pointer
    EXPECT_EQ(cs.verify().error(), Error::Corrupt);

    cs.reset(objects, nodes, tables);
    build(cs);
    nodes[5].flags = cap::CapNode::kUsed; // leaked node
    EXPECT_EQ(cs.verify().error(), Error::Corrupt);
}

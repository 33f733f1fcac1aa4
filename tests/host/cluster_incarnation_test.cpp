// A key holder's forged incarnations: one update may not raise an incarnation beyond
// kMaxIncarnationStep, so "dead at 2^32-1" kills nobody; and a member held dead at an
// incarnation it cannot outbid comes back by restarting (its new boot id ends that life).
#include "support/cluster_sim.h"

#include <gtest/gtest.h>

using namespace cluster;
using sim::ClusterSim;
using sim::kMs;
using sim::kSecond;

namespace {

constexpr Address kMallory { 0x0a0a00f0, kDefaultPort };

// An Announce from "mallory", who holds the cluster key, saying `subject` is `state` at `inc`.
class Forger {
public:
    explicit Forger(ClusterSim& s) : m_sim(s) {}
    std::vector<uint8_t> say(size_t subject, State state, uint32_t inc) {
        Message m;
        m.type = MessageType::Announce;
        m.sender.set("mallory");
        m.incarnation = 1;
        m.boot_id = make_boot_id(sim::kEpochMs, 1);
        m.counter = ++m_counter;
        m.updates[0].name.set(m_sim.name(subject));
        m.updates[0].addr = m_sim.addr(subject);
        m.updates[0].state = state;
        m.updates[0].incarnation = inc;
        m.update_count = 1;
        std::vector<uint8_t> bytes(kMaxDatagram);
        bytes.resize(encode(m, sim::test_key(), bytes));
        return bytes;
    }

private:
    ClusterSim& m_sim;
    uint64_t m_counter = 0;
};

bool held_dead_by_all_but(ClusterSim& s, size_t subject) {
    for (size_t i = 0; i < s.size(); ++i) {
        if (i == subject)
            continue;
        const Member* m = s.node(i).find(s.name(subject));
        if (!m || m->state != State::Dead)
            return false;
    }
    return true;
}

} // namespace

TEST(ClusterIncarnation, DeadAtTheLastIncarnationKillsNobody) {
    ClusterSim s(5, 41);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));
    Forger mallory(s);
    for (size_t i = 0; i < 5; ++i)
        s.inject(i, kMallory, mallory.say(2, State::Dead, UINT32_MAX));
    bool always_alive = true;
    s.run_until(s.now() + 30 * kSecond, [&] {
        always_alive &= s.all_alive({ 0, 1, 2, 3, 4 });
        return false;
    });
    EXPECT_TRUE(always_alive);
    EXPECT_LT(s.node(2).incarnation(), kMaxIncarnationStep) << "it did not have to outbid the rumour";
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_LT(s.node(i).find(s.name(2))->incarnation, kMaxIncarnationStep) << "held by " << i;
        EXPECT_GE(s.node(i).stats().incarnation_jumps, 1u) << "refused by " << i;
    }
    // Honest steps still work: a rumour just above what node 2 said is refuted at once.
    const uint32_t now_at = s.node(2).incarnation();
    s.inject(0, kMallory, mallory.say(2, State::Dead, now_at + 5));
    EXPECT_EQ(s.node(0).find(s.name(2))->state, State::Dead);
    EXPECT_TRUE(s.run_until(s.now() + 10 * kSecond, [&] { return s.all_alive({ 0, 1, 2, 3, 4 }); }));
    EXPECT_EQ(s.node(2).incarnation(), now_at + 6);
}

TEST(ClusterIncarnation, HeldDeadBeyondReachARestartComesBack) {
    ClusterSim s(5, 42);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));
    s.kill(2);
    ASSERT_TRUE(s.run_until(s.now() + 30 * kSecond, [&] { return held_dead_by_all_but(s, 2); }));
    // Mallory raises the dead incarnation step by step, each within the bound, far past anything
    // a restarted node could outbid by a step of its own.
    Forger mallory(s);
    for (int step = 0; step < 20; ++step) {
        for (size_t i = 0; i < 5; ++i) {
            if (i == 2)
                continue;
            const uint32_t held = s.node(i).find(s.name(2))->incarnation;
            EXPECT_EQ(s.inject(i, kMallory, mallory.say(2, State::Dead, held + kMaxIncarnationStep)),
                      Verdict::Accepted);
        }
    }
    const uint32_t held = s.node(0).find(s.name(2))->incarnation;
    ASSERT_GT(held, 20 * kMaxIncarnationStep);
    s.run_until(s.now() + 2 * kSecond);
    s.restart(2);
    ASSERT_TRUE(s.run_until(s.now() + 15 * kSecond, [&] { return s.all_alive(s.all()); }))
        << "a restart ends the life held dead";
    EXPECT_LT(s.node(2).incarnation(), kMaxIncarnationStep) << "back without outbidding the dead life";
    for (size_t i = 0; i < 5; ++i)
        EXPECT_LT(s.node(i).find(s.name(2))->incarnation, kMaxIncarnationStep) << "held by " << i;
    s.run_until(s.now() + 30 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all())) << "and it stays back: the dead life's rumours are refused as too far";
}

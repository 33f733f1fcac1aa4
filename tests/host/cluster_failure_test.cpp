// Failures in a simulated five-node swarm: a node dies and comes back, the network splits and
// heals, and a lossy network must not make anyone declare a live node dead.
#include "support/cluster_sim.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace cluster;
using sim::ClusterSim;
using sim::kMs;
using sim::kSecond;

namespace {

uint64_t period_ns(ClusterSim& s) { return uint64_t(s.node(0).config().period_ms) * kMs; }

bool holds_as(ClusterSim& s, const std::vector<size_t>& holders, size_t subject, State state) {
    for (size_t h : holders) {
        const Member* m = s.node(h).find(s.name(subject));
        if (!m || m->state != state)
            return false;
    }
    return true;
}

} // namespace

TEST(ClusterFailure, DeadWithinTheSuspicionBoundThenRejoins) {
    ClusterSim s(5, 11);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));
    const uint32_t before = s.node(0).find(s.name(2))->incarnation;

    s.kill(2);
    const uint64_t killed = s.now();
    const std::vector<size_t> others{ 0, 1, 3, 4 };
    const uint64_t bound = suspicion_timeout_ns(s.node(0).config(), 5) + 3 * period_ns(s);
    ASSERT_TRUE(s.run_until(killed + bound, [&] { return holds_as(s, others, 2, State::Dead); }))
        << "not dead everywhere within " << bound / kMs << " ms";
    const uint64_t detected = s.now() - killed;
    EXPECT_GT(detected, suspicion_timeout_ns(s.node(0).config(), 5)) << "not before the suspicion ran out";
    // The others stay alive to each other meanwhile.
    EXPECT_TRUE(s.all_alive(others));
    for (size_t i : others)
        EXPECT_GE(s.node(i).stats().deaths, 1u);

    s.run_until(s.now() + 3 * kSecond);
    s.restart(2);
    EXPECT_EQ(s.node(2).incarnation(), 1u);
    const uint64_t restarted = s.now();
    ASSERT_TRUE(s.run_until(restarted + 10 * kSecond, [&] { return s.all_alive(s.all()); }))
        << "not alive everywhere within 10 s of its restart";
    for (size_t i : s.all())
        EXPECT_GT(s.node(i).find(s.name(2))->incarnation, before) << "seen by " << i;
    EXPECT_GE(s.node(2).stats().refutations, 1u);
    // Stable afterwards.
    s.run_until(s.now() + 20 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all()));
}

TEST(ClusterFailure, PartitionAndHeal) {
    ClusterSim s(5, 12);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));

    s.partition({ { 0, 1 }, { 2, 3, 4 } });
    const bool split = s.run_until(s.now() + 30 * kSecond, [&] {
        return holds_as(s, { 0, 1 }, 2, State::Dead) && holds_as(s, { 0, 1 }, 3, State::Dead) &&
               holds_as(s, { 0, 1 }, 4, State::Dead) && holds_as(s, { 2, 3, 4 }, 0, State::Dead) &&
               holds_as(s, { 2, 3, 4 }, 1, State::Dead);
    });
    ASSERT_TRUE(split) << "each side should declare the other dead";
    EXPECT_TRUE(s.all_alive({ 0, 1 }));
    EXPECT_TRUE(s.all_alive({ 2, 3, 4 }));

    s.heal();
    ASSERT_TRUE(s.run_until(s.now() + 15 * kSecond, [&] { return s.all_alive(s.all()); }))
        << "not whole again within 15 s of healing";
    s.run_until(s.now() + 20 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all()));
}

TEST(ClusterFailure, PartitionHealsWithBroadcastDiscoveryOnly) {
    sim::SimOptions o;
    o.seed_node0 = false;
    o.broadcast = true;
    ClusterSim s(5, 13, o);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));
    s.partition({ { 0, 1 }, { 2, 3, 4 } });
    s.run_until(s.now() + 30 * kSecond);
    EXPECT_TRUE(holds_as(s, { 0, 1 }, 3, State::Dead));
    s.heal();
    EXPECT_TRUE(s.run_until(s.now() + 15 * kSecond, [&] { return s.all_alive(s.all()); }));
}

TEST(ClusterFailure, LossyNetworkKillsNobody) {
    for (uint64_t seed : { 21, 22, 23, 24, 25 }) {
        ClusterSim s(5, seed);
        s.set_loss_all(0.2);
        bool dead = false;
        std::string who;
        s.run_until(60 * kSecond, [&] {
            for (size_t i = 0; i < s.size(); ++i)
                for (size_t m = 0; m < s.node(i).member_count(); ++m)
                    if (s.node(i).member(m).state == State::Dead && !dead) {
                        dead = true;
                        who = s.name(i) + " holds " + s.node(i).member(m).name + " dead at " +
                              std::to_string(s.now() / kMs) + " ms";
                    }
            return dead;
        });
        EXPECT_FALSE(dead) << "seed " << seed << ": " << who;
        for (size_t i = 0; i < s.size(); ++i)
            EXPECT_EQ(s.node(i).member_count(), 5u) << "seed " << seed << ": everyone knows everyone";
        uint64_t suspicions = 0;
        for (size_t i = 0; i < s.size(); ++i)
            suspicions += s.node(i).stats().suspicions;
        // The loss is real: probes did fail, and refutations cleared every suspicion in time.
        EXPECT_GT(suspicions, 0u) << "seed " << seed;
        std::printf("seed %llu: %llu suspicions in 60 s, none fatal\n", (unsigned long long)seed,
                    (unsigned long long)suspicions);
    }
}

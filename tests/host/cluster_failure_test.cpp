// Failures in a simulated five-node swarm: a node dies and comes back, the network splits and
// heals, and a lossy network must not make anyone declare a live node dead.
#include "support/cluster_sim.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

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

// CLUSTER_SEEDS=N runs N seeds instead of the default few (for hunting rare schedules).
uint64_t seeds(uint64_t first, uint64_t count) {
    const char* env = getenv("CLUSTER_SEEDS");
    return first + (env ? strtoull(env, nullptr, 10) : count);
}

} // namespace

// Kills node 2 of five and restarts it once everyone holds it dead; returns how long after the
// kill that took (UINT64_MAX if it took longer than SWIM's worst case, asserted).
static uint64_t kill_and_rejoin(uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ClusterSim s(5, seed);
    s.run_until(5 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all()));
    const uint32_t before = s.node(0).find(s.name(2))->incarnation;

    s.kill(2);
    const uint64_t killed = s.now();
    const std::vector<size_t> others { 0, 1, 3, 4 };
    const uint64_t timeout = suspicion_timeout_ns(s.node(0).config(), 5);
    // SWIM's guarantee: each prober reaches a member within 2(n-1)-1 periods of round-robin
    // (n-1 = 4 targets), then one period of probing, the suspicion timeout and a little gossip.
    const uint64_t worst = timeout + (2 * 4 + 1) * period_ns(s);
    if (!s.run_until(killed + worst, [&] { return holds_as(s, others, 2, State::Dead); })) {
        ADD_FAILURE() << "not dead everywhere within " << worst / kMs << " ms";
        return UINT64_MAX;
    }
    const uint64_t detected = s.now() - killed;
    EXPECT_GT(detected, timeout) << "not before the suspicion ran out";
    EXPECT_TRUE(s.all_alive(others)) << "the others stay alive to each other meanwhile";
    for (size_t i : others)
        EXPECT_GE(s.node(i).stats().deaths, 1u);

    s.run_until(s.now() + 3 * kSecond);
    s.restart(2);
    EXPECT_EQ(s.node(2).incarnation(), 1u);
    const uint64_t restarted = s.now();
    EXPECT_TRUE(s.run_until(restarted + 10 * kSecond, [&] { return s.all_alive(s.all()); }))
        << "not alive everywhere within 10 s of its restart";
    // Its new boot id ends the life they held dead (no need to outbid that life's incarnation);
    // whoever heard of the return only through gossip learned it from a refutation.
    for (size_t i : others)
        EXPECT_TRUE(s.node(i).stats().restarts >= 1 || s.node(i).find(s.name(2))->incarnation > before)
            << "seen by " << i;
    if (getenv("CLUSTER_VERBOSE"))
        printf("seed %llu: dead everywhere after %llu ms, back after %llu ms\n", (unsigned long long)seed,
               (unsigned long long)(detected / kMs), (unsigned long long)((s.now() - restarted) / kMs));
    s.run_until(s.now() + 20 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all())) << "stable afterwards";
    return detected;
}

TEST(ClusterFailure, DeadWithinTheSuspicionBoundThenRejoins) {
    // The tight bound, suspicion timeout + 3 periods, needs someone to probe the dead node
    // within about two periods of its death. With four probers walking shuffled round-robin
    // orders that fails for a few percent of death moments (a model of the probe schedule alone
    // gives ~7%), so it is asserted for a clear majority of seeds, and SWIM's worst case for all.
    const uint64_t first = 11, last = seeds(first, 40);
    size_t within = 0;
    uint64_t bound = 0;
    for (uint64_t seed = first; seed < last; ++seed) {
        ClusterSim probe(1, 0);
        bound = suspicion_timeout_ns(probe.node(0).config(), 5) + 3 * period_ns(probe);
        within += kill_and_rejoin(seed) <= bound;
    }
    const size_t runs = size_t(last - first);
    printf("%zu of %zu deaths seen everywhere within %llu ms\n", within, runs, (unsigned long long)(bound / kMs));
    EXPECT_GE(within * 100, runs * 85) << within << " of " << runs;
}

static void partition_and_heal(uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ClusterSim s(5, seed);
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
    const uint64_t healed = s.now();
    ASSERT_TRUE(s.run_until(s.now() + 15 * kSecond, [&] { return s.all_alive(s.all()); }))
        << "not whole again within 15 s of healing";
    if (getenv("CLUSTER_VERBOSE"))
        printf("seed %llu: whole again %llu ms after healing\n", (unsigned long long)seed,
               (unsigned long long)((s.now() - healed) / kMs));
    s.run_until(s.now() + 20 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all()));
}

TEST(ClusterFailure, PartitionAndHeal) {
    for (uint64_t seed = 31; seed < seeds(31, 5); ++seed)
        partition_and_heal(seed);
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
    for (uint64_t seed = 21; seed < seeds(21, 5); ++seed) {
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

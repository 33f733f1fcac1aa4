// Larger simulated swarms: 16 nodes converge quickly, 64 fill the member table, and a 65th is
// refused without disturbing anyone.
#include "support/cluster_sim.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>

using namespace cluster;
using sim::ClusterSim;
using sim::kMs;
using sim::kSecond;

namespace {

// Wraps a costly whole-swarm predicate so the simulator evaluates it at most once per 10
// simulated ms rather than after every datagram (64 nodes x 64 names per look).
std::function<bool()> every_10ms(ClusterSim& s, std::function<bool()> check) {
    auto next = std::make_shared<uint64_t>(0);
    return [&s, check, next] {
        if (s.now() < *next)
            return false;
        *next = s.now() + 10 * kMs;
        return check();
    };
}

} // namespace

TEST(ClusterScale, SixteenConvergeWithinTenSeconds) {
    for (uint64_t seed : { 41, 42, 43 }) {
        ClusterSim s(16, seed);
        const auto everyone = s.all();
        EXPECT_TRUE(s.run_until(10 * kSecond, [&] { return s.all_alive(everyone); })) << "seed " << seed;
        printf("seed %llu: 16 nodes converged at %llu ms\n", (unsigned long long)seed,
               (unsigned long long)(s.now() / kMs));
        s.run_until(s.now() + 10 * kSecond);
        EXPECT_TRUE(s.all_alive(everyone)) << "seed " << seed;
    }
}

TEST(ClusterScale, SixtyFourFillTheTableAndTheSixtyFifthIsRefused) {
    ClusterSim s(kMaxMembers, 44);
    const auto everyone = s.all();
    ASSERT_TRUE(s.run_until(30 * kSecond, every_10ms(s, [&] { return s.all_alive(everyone); })));
    printf("64 nodes converged at %llu ms\n", (unsigned long long)(s.now() / kMs));
    for (size_t i : everyone)
        ASSERT_EQ(s.node(i).member_count(), kMaxMembers);

    std::vector<uint64_t> generations;
    for (size_t i : everyone)
        generations.push_back(s.node(i).generation());
    const size_t extra = s.add_node();
    bool disturbed = false;
    s.run_until(s.now() + 20 * kSecond, every_10ms(s, [&] {
                    for (size_t i : everyone)
                        for (size_t m = 0; m < s.node(i).member_count(); ++m)
                            disturbed |= s.node(i).member(m).state != State::Alive;
                    return disturbed;
                }));
    EXPECT_FALSE(disturbed);
    for (size_t i : everyone) {
        EXPECT_EQ(s.node(i).find(s.name(extra)), nullptr);
        EXPECT_EQ(s.node(i).generation(), generations[i]) << "node " << i << " saw a change";
    }
    EXPECT_GE(s.node(0).stats().table_full, 5u) << "its announcements to the seed, every 2 s";
    Event ev[kEventCapacity];
    size_t refused = 0;
    for (size_t n = s.node(0).drain_events(ev, kEventCapacity), k = 0; k < n; ++k)
        if (ev[k].kind == Event::Kind::Refused && ev[k].verdict == Verdict::TableFull && ev[k].addr == s.addr(extra))
            ++refused;
    EXPECT_GE(refused, 1u);
    EXPECT_EQ(s.node(extra).member_count(), 1u) << "nobody answered it";

    // Once a member dies, the newcomer gets its slot (the dead one is evicted).
    s.kill(5);
    EXPECT_TRUE(s.run_until(s.now() + 60 * kSecond, every_10ms(
                                                        s,
                                                        [&] {
        for (size_t i : everyone)
            if (i != 5 && (!s.node(i).find(s.name(extra)) || s.node(i).find(s.name(extra))->state != State::Alive))
                return false;
        return true;
                                                        })))
        << "the 65th takes the dead member's place";
    EXPECT_EQ(s.node(0).find(s.name(5)), nullptr);
}

namespace {

struct Load {
    uint64_t converged_ms = 0;
    double per_node_per_s = 0; // datagrams each node receives per second once converged
};

// A swarm that finds itself by broadcast alone (as ./basalt swarm boots it), measured over a
// minute of simulated time after it converged.
Load broadcast_swarm_load(size_t n, uint64_t seed) {
    sim::SimOptions o;
    o.seed_node0 = false;
    o.broadcast = true;
    ClusterSim s(n, seed, o);
    const auto everyone = s.all();
    Load load;
    if (!s.run_until(30 * kSecond, every_10ms(s, [&] { return s.all_alive(everyone); })))
        return load;
    load.converged_ms = s.now() / kMs;
    uint64_t before = 0, after = 0;
    for (size_t i : everyone)
        before += s.node(i).stats().received;
    s.run_until(s.now() + 60 * kSecond);
    EXPECT_TRUE(s.all_alive(everyone)) << n << " nodes stay converged";
    for (size_t i : everyone)
        after += s.node(i).stats().received;
    load.per_node_per_s = double(after - before) / double(n) / 60.0;
    return load;
}

} // namespace

// Discovery traffic must not grow with the swarm per node: with every node broadcasting every
// announce period and everyone answering, a 64-node swarm received ~4x what a 16-node one did
// per node (and saturated two cores under QEMU).
TEST(ClusterScale, BroadcastDiscoveryCostPerNodeStaysFlatFromSixteenToSixtyFour) {
    const Load small = broadcast_swarm_load(16, 51);
    const Load large = broadcast_swarm_load(64, 52);
    ASSERT_GT(small.converged_ms, 0u) << "16 nodes converge by broadcast";
    ASSERT_GT(large.converged_ms, 0u) << "64 nodes converge by broadcast";
    printf("16 nodes: converged at %llu ms, %.1f datagrams/s per node; 64 nodes: %llu ms, %.1f/s\n",
           (unsigned long long)small.converged_ms, small.per_node_per_s, (unsigned long long)large.converged_ms,
           large.per_node_per_s);
    EXPECT_LT(large.per_node_per_s, 1.5 * small.per_node_per_s);
    EXPECT_LT(large.converged_ms, 10000u);
}

// Overload can make every node declare every other dead at once (seen with 48 QEMU nodes on two
// cores). Once the pressure is gone the swarm must become one again, and while everyone is dead
// to everyone, discovery must not turn into a storm that keeps the overload going.
TEST(ClusterScale, SixtyFourRecoverFromEveryoneDeadToEveryone) {
    sim::SimOptions o;
    o.seed_node0 = false;
    o.broadcast = true;
    ClusterSim s(kMaxMembers, 53, o);
    const auto everyone = s.all();
    ASSERT_TRUE(s.run_until(30 * kSecond, every_10ms(s, [&] { return s.all_alive(everyone); })));

    std::vector<std::vector<size_t>> alone;
    for (size_t i : everyone)
        alone.push_back({ i });
    s.partition(alone);
    ASSERT_TRUE(s.run_until(s.now() + 120 * kSecond, every_10ms(
                                                         s,
                                                         [&] {
        for (size_t i : everyone)
            for (size_t m = 1; m < s.node(i).member_count(); ++m)
                if (s.node(i).member(m).state != State::Dead)
                    return false;
        return true;
                                                         })))
        << "isolated, everyone declares everyone dead";

    // What the others would receive if the network carried it: a broadcast reaches all 63.
    uint64_t offered = 0;
    s.on_send = [&](size_t, cluster::Address to, const std::vector<uint8_t>&) {
        offered += to == sim::kBroadcast ? everyone.size() - 1 : 1;
    };
    s.run_until(s.now() + 60 * kSecond);
    s.on_send = nullptr;
    const double per_node_per_s = double(offered) / double(everyone.size()) / 60.0;
    printf("everyone dead: %.2f datagrams/s offered per node\n", per_node_per_s);
    EXPECT_LT(per_node_per_s, 5.0) << "one dead member called per announce period, discovery backed off";

    s.heal();
    const uint64_t healed_at = s.now();
    EXPECT_TRUE(s.run_until(s.now() + 60 * kSecond, every_10ms(s, [&] { return s.all_alive(everyone); })));
    printf("64 nodes one swarm again %llu ms after the pressure ended\n",
           (unsigned long long)((s.now() - healed_at) / kMs));
}

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
    EXPECT_TRUE(s.run_until(s.now() + 60 * kSecond, every_10ms(s, [&] {
        for (size_t i : everyone)
            if (i != 5 && (!s.node(i).find(s.name(extra)) || s.node(i).find(s.name(extra))->state != State::Alive))
                return false;
        return true;
    }))) << "the 65th takes the dead member's place";
    EXPECT_EQ(s.node(0).find(s.name(5)), nullptr);
}

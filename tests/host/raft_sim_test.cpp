// The Raft simulation's own checks: a handful of seeds of each shape pass, and a seed replays to
// the same run (the CI seed ranges are the ctest raft.sim.*).
#include "raft_sim/sim.h"

#include <gtest/gtest.h>

namespace {

void expect_seeds_pass(unsigned nodes) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        raftsim::Options o;
        o.seed = seed;
        o.nodes = nodes;
        raftsim::Result r = raftsim::run(o);
        EXPECT_TRUE(r.ok) << r.failure << "\n  replay: " << raftsim::replay_command(o);
    }
}

} // namespace

TEST(RaftSim, ThreeNodesPass) { expect_seeds_pass(3); }

TEST(RaftSim, FiveNodesPass) { expect_seeds_pass(5); }

TEST(RaftSim, ASeedReplaysExactly) {
    raftsim::Options o;
    o.seed = 42;
    o.nodes = 5;
    raftsim::Result a = raftsim::run(o), b = raftsim::run(o);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.acknowledged, b.acknowledged);
    EXPECT_EQ(a.applied, b.applied);
    EXPECT_EQ(a.crashes, b.crashes);
}

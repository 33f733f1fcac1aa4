// The swarm fabric's graph and forwarding (qemu/swarm): topologies, shortest live paths,
// partitions and healing, impairments composed along a path, MAC learning, loss and duplication
// statistics for a seed, and the same event log for the same scenario and seed.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "switchboard.h"
#include "topology.h"

using fabric::LinkState;
using fabric::NodeState;
using fabric::Switchboard;
using fabric::Topology;

namespace {

// A link's current state with one field changed (the topology takes changes whole).
template <typename Field, typename Value>
LinkState with(const Topology& t, uint32_t a, uint32_t b, Field LinkState::*field, Value value) {
    LinkState s = t.link(a, b)->state;
    s.*field = static_cast<Field>(value);
    return s;
}

std::vector<uint8_t> frame(uint64_t dst, uint64_t src, size_t len = 64) {
    std::vector<uint8_t> f(len < 12 ? 12 : len, 0);
    for (int i = 0; i < 6; ++i) {
        f[i] = static_cast<uint8_t>(dst >> (8 * (5 - i)));
        f[6 + i] = static_cast<uint8_t>(src >> (8 * (5 - i)));
    }
    f.resize(len);
    return f;
}

constexpr uint64_t kBroadcast = 0xffffffffffffull;
uint64_t mac_of(uint32_t node) { return 0x525400120000ull + node; }

std::vector<uint32_t> targets(const std::vector<fabric::Delivery>& d) {
    std::vector<uint32_t> t;
    for (auto& x : d)
        t.push_back(x.to);
    return t;
}

} // namespace

TEST(FabricTopology, Shapes) {
    EXPECT_EQ(Topology::make("mesh", 5)->links().size(), 10u);
    EXPECT_EQ(Topology::make("ring", 5)->links().size(), 5u);
    EXPECT_EQ(Topology::make("ring", 2)->links().size(), 1u);
    EXPECT_EQ(Topology::make("star", 5)->links().size(), 4u);
    EXPECT_EQ(Topology::make("tree", 7)->links().size(), 6u);
    EXPECT_TRUE(Topology::make("tree", 7)->link(2, 6)) << "node 6's parent is 2";
    EXPECT_EQ(Topology::make("line", 4)->links().size(), 3u);
    EXPECT_EQ(Topology::make("torus", 4).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(Topology::make("mesh", 0).error(), ktl::Error::OutOfRange);
    EXPECT_EQ(Topology::make("mesh", 257).error(), ktl::Error::OutOfRange);
}

TEST(FabricTopology, FromJson) {
    auto t = Topology::parse(R"({"nodes": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0], [1, 0]]})");
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->links().size(), 4u) << "a link given twice is one link";
    EXPECT_FALSE(Topology::parse(R"({"nodes": 4, "links": [[0, 4]]})").ok()) << "no node 4";
    EXPECT_FALSE(Topology::parse(R"({"nodes": 4, "links": [[2, 2]]})").ok()) << "a link to itself";
    EXPECT_FALSE(Topology::parse(R"({"nodes": 4, "links": [[0, 1, 2]]})").ok());
    EXPECT_FALSE(Topology::parse(R"({"links": []})").ok());
    EXPECT_FALSE(Topology::parse(R"({"nodes": 4, "links": [[0, 1],)").ok());
}

TEST(FabricTopology, ShortestLivePaths) {
    auto t = *Topology::make("ring", 6);
    auto p = t.path(0, 3);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->nodes, (std::vector<uint32_t> { 0, 1, 2, 3 })) << "among equals, the lowest ids";
    t.set_link(1, 2, with(t, 1, 2, &LinkState::up, false));
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 5, 4, 3 }));
    t.set_node_state(5, NodeState::Paused);
    EXPECT_FALSE(t.path(0, 3)) << "no live path: one link down, one node paused";
    EXPECT_FALSE(t.path(0, 5)) << "a paused node receives nothing";
    t.set_node_state(5, NodeState::Up);
    auto star = *Topology::make("star", 4);
    EXPECT_EQ(star.path(1, 3)->nodes, (std::vector<uint32_t> { 1, 0, 3 }));
    star.set_node_state(0, NodeState::Down);
    EXPECT_FALSE(star.path(1, 3)) << "the hub is gone";
}

// Routes are kept per source until something changes: every kind of change must show at once.
TEST(FabricTopology, KeptRoutesFollowEveryChange) {
    auto t = *Topology::make("ring", 6);
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 1, 2, 3 }));
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 1, 2, 3 })) << "asked again: the kept route";
    t.set_link(1, 2, with(t, 1, 2, &LinkState::up, false));
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 5, 4, 3 })) << "a link set down";
    t.set_link(1, 2, with(t, 1, 2, &LinkState::up, true));
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 1, 2, 3 })) << "and up again";
    t.set_node_state(1, NodeState::Paused);
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 5, 4, 3 })) << "a paused node carries nothing";
    t.set_node_state(1, NodeState::Up);
    t.partition({ { 0, 5, 4, 3 }, { 1, 2 } });
    EXPECT_EQ(t.path(0, 3)->nodes, (std::vector<uint32_t> { 0, 5, 4, 3 }));
    EXPECT_FALSE(t.path(0, 2));
    t.heal();
    EXPECT_EQ(t.path(0, 2)->nodes, (std::vector<uint32_t> { 0, 1, 2 }));
    t.set_all_links({ true, 0.5, 0, 1000, 0 });
    EXPECT_EQ(t.path(0, 2)->delay_us, 2000u) << "impairments are read when asked, never kept";
    EXPECT_EQ(t.path(3, 3)->nodes, (std::vector<uint32_t> { 3 }));
    EXPECT_FALSE(t.set_link(0, 3, {})) << "no such link in a ring";
}

TEST(FabricTopology, ImpairmentsComposeAlongThePath) {
    auto t = *Topology::make("line", 3);
    t.set_link(0, 1, { true, 0.1, 0.02, 1000, 200 });
    t.set_link(1, 2, { true, 0.1, 0.0, 2500, 0 });
    auto p = t.path(0, 2);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->delay_us, 3500u);
    EXPECT_EQ(p->jitter_us, 200u);
    EXPECT_NEAR(p->loss, 0.19, 1e-12);
    EXPECT_NEAR(p->dup, 0.02, 1e-12);
}

TEST(FabricTopology, PartitionAndHeal) {
    auto t = *Topology::make("mesh", 5);
    t.set_link(3, 4, with(t, 3, 4, &LinkState::up, false)); // down before, by hand
    t.partition({ { 0, 1 }, { 2, 3, 4 } });
    EXPECT_TRUE(t.path(0, 1));
    EXPECT_FALSE(t.path(0, 2));
    EXPECT_FALSE(t.path(4, 1));
    EXPECT_EQ(t.path(2, 4)->nodes.size(), 2u);
    EXPECT_EQ(t.path(3, 4)->nodes, (std::vector<uint32_t> { 3, 2, 4 })) << "3-4 stays down; around through 2";
    t.heal();
    EXPECT_TRUE(t.path(0, 4));
    EXPECT_FALSE(t.link(3, 4)->state.up) << "heal brings back only what the partition cut";
    t.partition({ { 0, 1, 2 } });
    EXPECT_FALSE(t.path(3, 0)) << "nodes in no group are cut off";
    EXPECT_FALSE(t.path(3, 4));
}

TEST(FabricSwitchboard, LearnsAddressesAndFloodsTheRest) {
    auto t = *Topology::make("mesh", 4);
    Switchboard sb(t, 1);
    auto f = frame(kBroadcast, mac_of(1));
    EXPECT_EQ(targets(sb.send(1, f.data(), f.size(), 0)), (std::vector<uint32_t> { 0, 2, 3 }));
    auto reply = frame(mac_of(1), mac_of(2));
    EXPECT_EQ(targets(sb.send(2, reply.data(), reply.size(), 10)), (std::vector<uint32_t> { 1 }))
        << "learned: node 1 owns it";
    auto unknown = frame(mac_of(9), mac_of(3));
    EXPECT_EQ(targets(sb.send(3, unknown.data(), unknown.size(), 20)).size(), 3u) << "unknown unicast floods";
    auto runt = frame(kBroadcast, mac_of(0), 10);
    EXPECT_TRUE(sb.send(0, runt.data(), runt.size(), 30).empty());
    t.set_node_state(2, NodeState::Paused);
    EXPECT_TRUE(sb.send(2, reply.data(), reply.size(), 40).empty()) << "a paused node sends nothing";
}

// A node sending from ever new source addresses (anyone can forge them) cannot grow the table
// without bound: beyond kMaxMacs the address heard from the longest ago is forgotten, while the
// nodes that keep speaking stay learned.
TEST(FabricSwitchboard, MacTableIsBounded) {
    auto t = Topology::make("mesh", 4);
    ASSERT_TRUE(t);
    Switchboard sb(*t, 1);
    sb.keep_log(false);
    auto from_node = [&](uint32_t n) {
        auto f = frame(kBroadcast, mac_of(n));
        (void)sb.send(n, f.data(), f.size(), 0);
    };
    from_node(2); // learned first, then silent: the one to be forgotten
    from_node(3);
    for (uint64_t i = 0; i < 3 * Switchboard::kMaxMacs; ++i) {
        auto f = frame(kBroadcast, 0x0200'0000'0000ull + i); // locally administered, unicast
        (void)sb.send(1, f.data(), f.size(), 0);
        if (i % 1000 == 0)
            from_node(3); // node 3 keeps speaking
    }
    EXPECT_EQ(sb.macs(), Switchboard::kMaxMacs);
    EXPECT_EQ(sb.macs_evicted(), 3 * Switchboard::kMaxMacs + 2 - Switchboard::kMaxMacs);
    auto to3 = frame(mac_of(3), mac_of(0));
    EXPECT_EQ(targets(sb.send(0, to3.data(), to3.size(), 0)), (std::vector<uint32_t> { 3 })) << "still learned";
    auto to2 = frame(mac_of(2), mac_of(0));
    EXPECT_EQ(targets(sb.send(0, to2.data(), to2.size(), 0)), (std::vector<uint32_t> { 1, 2, 3 }))
        << "forgotten: flooded";
    from_node(2);
    EXPECT_EQ(targets(sb.send(0, to2.data(), to2.size(), 0)), (std::vector<uint32_t> { 2 })) << "learned again";
}

TEST(FabricSwitchboard, LossAndDuplicationForASeed) {
    auto t = *Topology::make("line", 3);
    t.set_link(0, 1, with(t, 0, 1, &LinkState::loss, 0.2));
    t.set_link(1, 2, with(t, 1, 2, &LinkState::dup, 0.1));
    Switchboard sb(t, 42);
    auto f = frame(kBroadcast, mac_of(0));
    uint64_t delivered = 0;
    for (int i = 0; i < 20000; ++i)
        for (auto& d : sb.send(0, f.data(), f.size(), i))
            delivered += d.to == 2;
    auto c01 = sb.counters().at({ 0, 1 });
    auto c12 = sb.counters().at({ 1, 2 });
    EXPECT_EQ(c01.frames, 40000u) << "to node 1 and through it to node 2";
    EXPECT_NEAR(double(c01.lost) / c01.frames, 0.2, 0.01);
    EXPECT_NEAR(double(c12.duplicated) / c12.frames, 0.1, 0.01);
    EXPECT_NEAR(double(delivered) / 20000, 0.8 * 1.1, 0.02);
}

TEST(FabricSwitchboard, SameScenarioAndSeedSameLog) {
    auto run = [](uint64_t seed) {
        auto t = *Topology::make("ring", 5);
        t.set_all_links({ true, 0.15, 0.05, 700, 300 });
        Switchboard sb(t, seed);
        for (uint32_t i = 0; i < 500; ++i) {
            auto f = frame(i % 3 ? mac_of((i * 7) % 5) : kBroadcast, mac_of(i % 5));
            sb.send(i % 5, f.data(), f.size(), i * 100);
            if (i == 250)
                t.partition({ { 0, 1 }, { 2, 3, 4 } });
        }
        return sb.log_text();
    };
    const std::string a = run(7), b = run(7), c = run(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(a.find("lost"), std::string::npos);
    EXPECT_NE(a.find("duplicated"), std::string::npos);
    EXPECT_NE(a.find("unreachable"), std::string::npos) << "after the partition";
}

TEST(FabricSwitchboard, DelayAndJitter) {
    auto t = *Topology::make("line", 2);
    t.set_link(0, 1, { true, 0, 0, 5000, 1000 });
    Switchboard sb(t, 3);
    auto f = frame(kBroadcast, mac_of(0));
    uint64_t lo = ~0ull, hi = 0;
    for (int i = 0; i < 1000; ++i) {
        auto d = sb.send(0, f.data(), f.size(), 1'000'000);
        ASSERT_EQ(d.size(), 1u);
        lo = std::min(lo, d[0].due_us - 1'000'000);
        hi = std::max(hi, d[0].due_us - 1'000'000);
    }
    EXPECT_GE(lo, 5000u);
    EXPECT_LE(hi, 6000u);
    EXPECT_GT(hi - lo, 800u) << "the jitter is spread over its range";
}

// rate=KBPS: frames leave one after another at the link's rate (a 1,250-byte frame takes 10 ms at
// 1,000 kbit/s) on their way across a two-link path, and past a second of backlog the link drops
// instead of queueing further.
TEST(FabricSwitchboard, RateLimitedLinkSerializesAndDropsPastItsBacklog) {
    auto t = *Topology::make("line", 3);
    t.set_link(0, 1, with(t, 0, 1, &LinkState::rate_kbps, 1000));
    Switchboard sb(t, 5);
    auto hello = frame(kBroadcast, mac_of(2));
    (void)sb.send(2, hello.data(), hello.size(), 0); // node 2's address is learned
    auto f = frame(mac_of(2), mac_of(0), 1250);
    const uint64_t t0 = 1'000'000;
    for (uint64_t i = 1; i <= 100; ++i) {
        auto d = sb.send(0, f.data(), f.size(), t0);
        ASSERT_EQ(d.size(), 1u) << "frame " << i;
        EXPECT_EQ(d[0].to, 2u);
        EXPECT_EQ(d[0].due_us - t0, i * 10'000) << "frame " << i;
    }
    EXPECT_TRUE(sb.send(0, f.data(), f.size(), t0).empty()) << "a 101st frame would wait more than a second";
    EXPECT_EQ(sb.counters().at({ 0, 1 }).queue_drops, 1u);
    // Once the transmitter has caught up, frames pass again without waiting.
    auto later = sb.send(0, f.data(), f.size(), t0 + 2'000'000);
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].due_us - (t0 + 2'000'000), 10'000u);
}

// One node's protocol in a simulated network: discovery through a seed or a broadcast
// address, replayed datagrams, the operator's ping, and a node holding the wrong key.
#include "support/cluster_sim.h"

#include <gtest/gtest.h>

using namespace cluster;
using sim::ClusterSim;
using sim::kMs;
using sim::kSecond;

namespace {

// Runs until every node holds every other as alive; the time it took, or UINT64_MAX.
uint64_t time_to_converge(ClusterSim& s, uint64_t limit) {
    const auto everyone = s.all();
    const uint64_t start = s.now();
    if (s.run_until(start + limit, [&] { return s.all_alive(everyone); }))
        return s.now() - start;
    return UINT64_MAX;
}

std::vector<Event> events_of(Node& n) {
    std::vector<Event> out(kEventCapacity);
    out.resize(n.drain_events(out.data(), out.size()));
    return out;
}

} // namespace

TEST(ClusterNode, FiveConvergeThroughASeed) {
    ClusterSim s(5, 1);
    const uint64_t t = time_to_converge(s, 5 * kSecond);
    ASSERT_LE(t, 5 * kSecond);
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(s.node(i).member_count(), 5u);
        EXPECT_EQ(s.node(i).stats().bad_mac, 0u);
        EXPECT_EQ(s.node(i).incarnation(), 1u) << "nobody had to refute anything";
        size_t joined = 0;
        for (const Event& e : events_of(s.node(i)))
            joined += e.kind == Event::Kind::Joined;
        EXPECT_EQ(joined, 4u) << "one Joined event per peer";
    }
    // And it stays that way.
    s.run_until(s.now() + 20 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all()));
}

TEST(ClusterNode, FiveConvergeThroughBroadcastAlone) {
    ClusterSim::Options o;
    o.seed_node0 = false;
    o.broadcast = true;
    ClusterSim s(5, 2, o);
    EXPECT_LE(time_to_converge(s, 5 * kSecond), 5 * kSecond);
    s.run_until(s.now() + 10 * kSecond);
    EXPECT_TRUE(s.all_alive(s.all()));
    for (size_t i = 0; i < 5; ++i)
        EXPECT_GT(s.node(i).stats().from_self, 0u) << "its own broadcasts came back and were dropped";
}

TEST(ClusterNode, ExactReplayIsRefused) {
    ClusterSim s(3, 3);
    std::vector<uint8_t> captured;
    s.on_send = [&](size_t from, Address to, const std::vector<uint8_t>& bytes) {
        if (from == 1 && to == s.addr(2) && captured.empty())
            captured = bytes;
    };
    s.run_until(10 * kSecond);
    ASSERT_FALSE(captured.empty());
    ASSERT_TRUE(s.all_alive(s.all()));
    const uint64_t generation = s.node(2).generation();
    events_of(s.node(2));
    EXPECT_EQ(s.inject(2, s.addr(1), captured), Verdict::Replayed);
    EXPECT_EQ(s.inject(2, s.addr(1), captured), Verdict::Replayed);
    EXPECT_EQ(s.node(2).stats().replayed, 2u);
    EXPECT_EQ(s.node(2).generation(), generation);
    auto ev = events_of(s.node(2));
    ASSERT_EQ(ev.size(), 1u) << "the second comes within a second of the first: counted, not reported";
    EXPECT_EQ(ev[0].kind, Event::Kind::Refused);
    EXPECT_EQ(ev[0].verdict, Verdict::Replayed);
    EXPECT_EQ(ev[0].addr, s.addr(1));
}

// Node 1 boots three times (A, B, C); an attacker without the key captured what it said to node 2
// during A and B. Replayed in rotation to node 2, which has heard C, none of it is accepted, and
// C stays alive everywhere. (With a window that remembered only the previous boot, A's capture
// passed as a restart, after which C itself was refused as replayed and declared dead.)
TEST(ClusterNode, CapturesOfEarlierBootsNeverComeBack) {
    ClusterSim s(3, 6);
    std::vector<std::vector<uint8_t>> captured; // one per boot of node 1, the latest last
    bool want = true;
    s.on_send = [&](size_t from, Address to, const std::vector<uint8_t>& bytes) {
        if (from == 1 && to == s.addr(2) && want) {
            captured.push_back(bytes);
            want = false;
        }
    };
    s.run_until(10 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));
    for (int boot = 0; boot < 2; ++boot) {
        ASSERT_EQ(captured.size(), size_t(boot + 1));
        s.kill(1);
        s.run_until(s.now() + 2 * kSecond);
        s.restart(1);
        want = true;
        ASSERT_TRUE(s.run_until(s.now() + 20 * kSecond, [&] { return s.all_alive(s.all()); }));
        s.run_until(s.now() + 5 * kSecond);
    }
    ASSERT_EQ(captured.size(), 3u);
    EXPECT_GE(s.node(2).stats().restarts, 2u) << "node 2 saw both restarts as such";
    const uint64_t replayed = s.node(2).stats().replayed;
    for (int round = 0; round < 50; ++round) {
        EXPECT_EQ(s.inject(2, s.addr(1), captured[round % 2]), Verdict::Replayed) << "round " << round;
        s.run_until(s.now() + 100 * kMs);
    }
    EXPECT_EQ(s.node(2).stats().replayed, replayed + 50);
    // C's own datagrams keep flowing, and nobody holds it anything but alive, for longer than a
    // suspicion timeout would take to kill it.
    uint64_t deaths = s.node(2).stats().deaths;
    bool always_alive = true;
    s.run_until(s.now() + 30 * kSecond, [&] {
        if (s.inject(2, s.addr(1), captured[s.now() % 2]) != Verdict::Replayed)
            always_alive = false;
        always_alive &= s.all_alive(s.all());
        return false;
    });
    EXPECT_TRUE(always_alive);
    EXPECT_EQ(s.node(2).stats().deaths, deaths);
}

// A keyless sender alternating malformed and badly tagged datagrams from a new source port each
// time: the refusals are counted, but the events they make (which the kernel writes to the audit
// trail) are bounded per kind, whatever the sources, and say how many went unreported.
TEST(ClusterNode, RefusalFloodMakesFewEvents) {
    ClusterSim s(2, 7);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));
    events_of(s.node(1));
    Message m;
    m.type = MessageType::Announce;
    m.sender.set("intruder");
    m.boot_id = make_boot_id(sim::kEpochMs, 1);
    std::vector<uint8_t> bad_mac(kMaxDatagram);
    bad_mac.resize(encode(m, derive_key("guessed", "test-swarm"), bad_mac));
    const std::vector<uint8_t> malformed { 'B', 'C', 'S', 'W', 1, 2, 3 };
    const uint64_t start = s.now();
    std::vector<Event> refused;
    for (uint32_t i = 0; i < 5000; ++i) {
        const Address from { 0x0a0a00f0, uint16_t(1024 + i) };
        EXPECT_NE(s.inject(1, from, i % 2 ? bad_mac : malformed), Verdict::Accepted);
        // 5000 datagrams over ten seconds, the node running meanwhile.
        s.run_until(start + (i + 1) * 2 * kMs);
        for (const Event& e : events_of(s.node(1)))
            if (e.kind == Event::Kind::Refused)
                refused.push_back(e);
    }
    const Stats& st = s.node(1).stats();
    EXPECT_EQ(st.malformed, 2500u);
    EXPECT_EQ(st.bad_mac, 2500u);
    EXPECT_EQ(st.events_lost, 0u);
    // Per kind: at once, then after 1, 2 and 4 s (the interval doubling each time): 4 in 10 s.
    size_t per_kind[2] = {};
    uint64_t reported_unreported = 0;
    for (const Event& e : refused) {
        ASSERT_TRUE(e.verdict == Verdict::Malformed || e.verdict == Verdict::BadMac);
        ++per_kind[e.verdict == Verdict::BadMac];
        reported_unreported += e.unreported;
    }
    EXPECT_EQ(per_kind[0], 4u);
    EXPECT_EQ(per_kind[1], 4u);
    EXPECT_EQ(st.refusals_unreported, 5000u - refused.size());
    EXPECT_LE(reported_unreported, st.refusals_unreported) << "the counts carried by the events add up";
    EXPECT_GT(reported_unreported, 0u);
    EXPECT_TRUE(s.all_alive(s.all()));
}

TEST(ClusterNode, PingMeasuresTheRoundTrip) {
    ClusterSim s(3, 4);
    s.set_delay(0, 1, 7 * kMs);
    s.run_until(5 * kSecond);
    ASSERT_TRUE(s.all_alive(s.all()));

    auto id = s.ping(0, s.name(1));
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(s.node(0).ping_result(*id).status, Node::PingResult::Status::Pending);
    s.run_until(s.now() + 100 * kMs);
    auto r = s.node(0).ping_result(*id);
    EXPECT_EQ(r.status, Node::PingResult::Status::Answered);
    EXPECT_EQ(r.rtt_ns, 14 * kMs) << "7 ms each way";

    EXPECT_EQ(s.ping(0, "nobody").error(), ktl::Error::NotFound);
    EXPECT_EQ(s.ping(0, s.name(0)).error(), ktl::Error::NotFound) << "not ourselves";
    EXPECT_EQ(s.node(0).ping_result(9999).status, Node::PingResult::Status::Unknown);

    s.kill(2);
    auto lost = s.ping(0, s.name(2));
    ASSERT_TRUE(lost.ok());
    s.run_until(s.now() + 2 * s.node(0).config().period_ms * kMs);
    EXPECT_EQ(s.node(0).ping_result(*lost).status, Node::PingResult::Status::TimedOut);
    EXPECT_EQ(s.node(0).ping_result(*id).status, Node::PingResult::Status::Answered) << "older results stay";

    // At most kMaxPendingPings at once.
    for (size_t i = 0; i < kMaxPendingPings; ++i)
        EXPECT_TRUE(s.ping(0, s.name(2)).ok());
    EXPECT_EQ(s.ping(0, s.name(1)).error(), ktl::Error::Full);
}

TEST(ClusterNode, WrongKeyNeverGetsIn) {
    ClusterSim s(5, 5);
    ASSERT_LE(time_to_converge(s, 5 * kSecond), 5 * kSecond);
    const size_t intruder = s.add_node(derive_key("wrong secret", "test-swarm"));
    // Forged news, tagged with its own key: everyone is dead, at a huge incarnation.
    Message forged;
    forged.type = MessageType::Announce;
    forged.sender.set(s.name(0)); // even posing as node 0
    forged.incarnation = 1000;
    forged.boot_id = 1;
    forged.counter = 1;
    for (size_t i = 0; i < 5; ++i) {
        forged.updates[i].name.set(s.name(i));
        forged.updates[i].addr = s.addr(i);
        forged.updates[i].state = State::Dead;
        forged.updates[i].incarnation = 1000;
    }
    forged.update_count = 5;
    std::vector<uint8_t> bytes(kMaxDatagram);
    bytes.resize(encode(forged, derive_key("wrong secret", "test-swarm"), bytes));
    for (size_t i = 1; i < 5; ++i)
        EXPECT_EQ(s.inject(i, s.addr(intruder), bytes), Verdict::BadMac);

    bool disturbed = false;
    s.run_until(s.now() + 30 * kSecond, [&] {
        for (size_t i = 0; i < 5; ++i)
            disturbed |= s.node(i).find(s.name(intruder)) != nullptr || s.node(i).member_count() != 5;
        return false;
    });
    EXPECT_FALSE(disturbed);
    EXPECT_TRUE(s.all_alive({ 0, 1, 2, 3, 4 }));
    EXPECT_EQ(s.node(intruder).member_count(), 1u) << "and it learned nothing either";
    uint64_t bad_mac = 0;
    for (size_t i = 0; i < 5; ++i) {
        bad_mac += s.node(i).stats().bad_mac;
        EXPECT_EQ(s.node(i).incarnation(), 1u) << "no refutation of forged rumours";
        size_t refused = 0;
        for (const Event& e : events_of(s.node(i)))
            if (e.kind == Event::Kind::Refused && e.addr == s.addr(intruder)) {
                EXPECT_EQ(e.verdict, Verdict::BadMac);
                ++refused;
            }
        if (i == 0) {
            // Its announcements reach its seed every 2 s: reported at once, then with an interval
            // doubling from 1 s (after 2, 4, 8 and 16 s) over the 30 s.
            EXPECT_GE(refused, 4u);
            EXPECT_LE(refused, 5u);
        }
    }
    EXPECT_GE(bad_mac, 15u + 4u);
}

// The leader's side of linearizable reads (lib/raft/read_index.h): a read is answered only after
// a round of probes that started after it arrived is acknowledged by a majority of the voters in
// the leader's term, and only while the commit index covers the earlier terms; everything else
// waits or is refused.
#include <raft/read_index.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

using raftread::LeaderReads;

constexpr uint64_t kMs = 1'000'000;
const uint64_t kThree[] = { 1, 2, 3 };
const uint64_t kFive[] = { 1, 2, 3, 4, 5 };

raftread::View leader(uint64_t term, uint64_t commit, std::span<const uint64_t> voters = kThree, bool ready = true) {
    return raftread::View { 1, term, commit, true, ready, voters };
}

struct Turn {
    std::vector<LeaderReads::Answer> answers;
    LeaderReads::Probe probe;
};

Turn turn(LeaderReads& r, const raftread::View& v, uint64_t now) {
    LeaderReads::Answer out[LeaderReads::kMaxReads];
    Turn t;
    const size_t n = r.turn(v, now, out, t.probe);
    t.answers.assign(out, out + n);
    return t;
}

TEST(RaftReadIndex, AnsweredAfterAMajorityAcknowledgesARoundStartedAfterTheRead) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(1, 100));
    ASSERT_TRUE(r.ask(2, 200));
    Turn t = turn(r, leader(4, 17), 0);
    EXPECT_TRUE(t.answers.empty());
    ASSERT_EQ(t.probe.round, 1u);
    EXPECT_EQ(t.probe.term, 4u);
    // Nothing until a second voter (the leader counts itself) acknowledges in its term.
    EXPECT_TRUE(turn(r, leader(4, 17), kMs).answers.empty());
    r.ack(2, 1, 4);
    t = turn(r, leader(4, 18), 2 * kMs);
    ASSERT_EQ(t.answers.size(), 2u);
    EXPECT_EQ(t.answers[0].reader, 1u);
    EXPECT_EQ(t.answers[0].ticket, 100u);
    EXPECT_EQ(t.answers[0].index, 18u); // the commit index when answered
    EXPECT_EQ(t.answers[1].reader, 2u);
    EXPECT_EQ(t.answers[1].ticket, 200u);
    EXPECT_EQ(t.probe.round, 0u); // nothing left waiting: no round
    EXPECT_EQ(r.waiting(), 0u);
}

TEST(RaftReadIndex, AReadAskedAgainWaitsOnceAndIsAnsweredOnce) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(2, 7));
    EXPECT_EQ(turn(r, leader(3, 9), 0).probe.round, 1u);
    ASSERT_TRUE(r.ask(2, 7)); // the reader heard nothing yet and asks again: still round 1's
    EXPECT_EQ(r.waiting(), 1u);
    r.ack(3, 1, 3);
    Turn t = turn(r, leader(3, 9), kMs);
    ASSERT_EQ(t.answers.size(), 1u);
    EXPECT_EQ(t.answers[0].ticket, 7u);
    EXPECT_EQ(r.waiting(), 0u);
    // Its answer lost, asked once more: a new read, answered after a round of its own.
    ASSERT_TRUE(r.ask(2, 7));
    EXPECT_EQ(turn(r, leader(3, 10), 2 * kMs).probe.round, 2u);
    r.ack(3, 2, 3);
    t = turn(r, leader(3, 10), 3 * kMs);
    ASSERT_EQ(t.answers.size(), 1u);
    EXPECT_EQ(t.answers[0].index, 10u);
}

TEST(RaftReadIndex, AReadAskedDuringARoundWaitsForTheNextOne) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(1, 1));
    EXPECT_EQ(turn(r, leader(2, 5), 0).probe.round, 1u);
    ASSERT_TRUE(r.ask(3, 2)); // round 1's probes left before this read arrived
    r.ack(3, 1, 2);
    Turn t = turn(r, leader(2, 5), kMs);
    ASSERT_EQ(t.answers.size(), 1u);
    EXPECT_EQ(t.answers[0].ticket, 1u);
    EXPECT_EQ(t.probe.round, 2u);
    r.ack(2, 2, 2);
    t = turn(r, leader(2, 6), 2 * kMs);
    ASSERT_EQ(t.answers.size(), 1u);
    EXPECT_EQ(t.answers[0].ticket, 2u);
    EXPECT_EQ(t.answers[0].index, 6u);
}

TEST(RaftReadIndex, AcknowledgementsThatProveNothingAreNotCounted) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(1, 1));
    ASSERT_EQ(turn(r, leader(7, 3, kFive), 0).probe.round, 1u);
    r.ack(2, 1, 8); // a voter already in a later term
    r.ack(3, 0, 7); // another round
    r.ack(9, 1, 7); // not a voter
    r.ack(1, 1, 7); // the leader itself (counted once, by the configuration)
    r.ack(4, 1, 7);
    r.ack(4, 1, 7);                                                 // twice from one voter
    EXPECT_TRUE(turn(r, leader(7, 3, kFive), kMs).answers.empty()); // 2 of 5
    r.ack(5, 1, 6); // a voter that has not heard of term 7 yet: in no later leader's majority either
    EXPECT_EQ(turn(r, leader(7, 3, kFive), 2 * kMs).answers.size(), 1u); // 3 of 5
}

TEST(RaftReadIndex, NotAnsweredUntilTheCommitIndexCoversEarlierTerms) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(1, 1));
    ASSERT_EQ(turn(r, leader(3, 10, kThree, false), 0).probe.round, 1u);
    r.ack(2, 1, 3);
    Turn t = turn(r, leader(3, 10, kThree, false), kMs);
    EXPECT_TRUE(t.answers.empty());
    EXPECT_EQ(t.probe.round, 0u); // confirmed: no new round, only the no-op's commit awaited
    t = turn(r, leader(3, 12), 2 * kMs);
    ASSERT_EQ(t.answers.size(), 1u);
    EXPECT_EQ(t.answers[0].index, 12u);
}

TEST(RaftReadIndex, LeadershipLostRefusesEveryReadAndATermChangeVoidsTheRound) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(2, 1));
    ASSERT_TRUE(r.ask(1, 2));
    ASSERT_EQ(turn(r, leader(5, 9), 0).probe.round, 1u);
    r.ack(2, 1, 5);
    raftread::View follower = leader(6, 9);
    follower.leader = false;
    Turn t = turn(r, follower, kMs);
    ASSERT_EQ(t.answers.size(), 2u);
    EXPECT_EQ(t.answers[0].index, 0u);
    EXPECT_EQ(t.answers[1].index, 0u);
    EXPECT_EQ(r.waiting(), 0u);

    // Leader again in a later term: an acknowledgement of the old term's round confirms nothing.
    ASSERT_TRUE(r.ask(3, 3));
    t = turn(r, leader(8, 20), 2 * kMs);
    const uint64_t round = t.probe.round;
    ASSERT_NE(round, 0u);
    EXPECT_EQ(t.probe.term, 8u);
    r.ack(2, round - 1, 8); // an acknowledgement of the old term's round
    EXPECT_TRUE(turn(r, leader(8, 20), 3 * kMs).answers.empty());
    r.ack(2, round, 8);
    EXPECT_EQ(turn(r, leader(8, 20), 4 * kMs).answers.size(), 1u);
}

TEST(RaftReadIndex, ARoundThatGetsNoMajorityIsStartedAgain) {
    LeaderReads r;
    ASSERT_TRUE(r.ask(1, 1));
    ASSERT_EQ(turn(r, leader(2, 1), 0).probe.round, 1u);
    EXPECT_EQ(turn(r, leader(2, 1), LeaderReads::kRoundTimeoutNs).probe.round, 0u);
    const Turn t = turn(r, leader(2, 1), LeaderReads::kRoundTimeoutNs + kMs);
    EXPECT_EQ(t.probe.round, 2u);
    r.ack(3, 1, 2); // the lost round's late acknowledgement no longer counts
    EXPECT_TRUE(turn(r, leader(2, 1), LeaderReads::kRoundTimeoutNs + 2 * kMs).answers.empty());
    r.ack(3, 2, 2);
    EXPECT_EQ(turn(r, leader(2, 1), LeaderReads::kRoundTimeoutNs + 3 * kMs).answers.size(), 1u);
}

TEST(RaftReadIndex, AGroupOfOneConfirmsAtOnceAndTheWaitingReadsAreBounded) {
    LeaderReads r;
    const uint64_t one[] = { 1 };
    ASSERT_TRUE(r.ask(1, 1));
    const Turn t = turn(r, leader(1, 4, one), 0);
    ASSERT_EQ(t.answers.size(), 1u);
    EXPECT_EQ(t.answers[0].index, 4u);

    for (size_t i = 0; i < LeaderReads::kMaxReads; ++i)
        ASSERT_TRUE(r.ask(2, i + 1));
    EXPECT_FALSE(r.ask(2, 999));
    // Answers beyond the caller's room wait for the next turn, none lost.
    LeaderReads::Answer out[4];
    LeaderReads::Probe probe;
    ASSERT_EQ(r.turn(leader(1, 4, one), kMs, out, probe), 4u);
    EXPECT_EQ(r.waiting(), LeaderReads::kMaxReads - 4);
    EXPECT_EQ(out[3].ticket, 4u);
}

TEST(RaftReadIndex, MessagesRoundTripAndMalformedOnesAreRefused) {
    uint8_t buf[raftread::kMessageBytes];
    const raftread::Message m { raftread::kAck, 77, 5, 9 };
    ASSERT_EQ(raftread::encode(m, buf), raftread::kMessageBytes);
    ASSERT_TRUE(raftread::is_read_message(buf));
    auto d = raftread::decode(buf);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->type, raftread::kAck);
    EXPECT_EQ(d->ticket, 77u);
    EXPECT_EQ(d->a, 5u);
    EXPECT_EQ(d->b, 9u);
    EXPECT_FALSE(raftread::decode(std::span<const uint8_t>(buf, sizeof buf - 1)));
    uint8_t bad[raftread::kMessageBytes];
    std::copy(buf, buf + sizeof buf, bad);
    bad[20] = 15; // a length that does not add up
    EXPECT_FALSE(raftread::decode(bad));
    std::copy(buf, buf + sizeof buf, bad);
    bad[16] = 0x06, bad[17] = 0x01; // type 0x106
    EXPECT_FALSE(raftread::is_read_message(bad));
    EXPECT_FALSE(raftread::decode(bad));
    std::copy(buf, buf + sizeof buf, bad);
    bad[16] = 3, bad[17] = 0; // a store change (an upsert), not a read message
    EXPECT_FALSE(raftread::is_read_message(bad));
}

} // namespace

// Raft messages on the wire (lib/raft/wire.h): every message type survives encode, fragments,
// sealing, opening, reassembly and decode unchanged; a wrong key or a changed byte is refused; the
// reassembler keeps each sender's order and drops what is stale or contradicts itself; malformed
// payloads (authentic or not) are refused without leaks (ASan) and anything random is survived.
#include <crypto/hmac_sha256.h>
#include <raft/wire.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace {

using raftwire::FrameHeader;
using raftwire::Reassembler;
using raftwire::Verdict;

const std::vector<uint8_t> kKey(32, 0x5a);
const std::vector<uint8_t> kOtherKey(32, 0xa5);

// The datagrams of one message from 1 to 2 in group 7.
std::vector<std::vector<uint8_t>> datagrams(const raft_message& m, uint64_t epoch, uint64_t seq,
                                            const std::vector<uint8_t>& key = kKey) {
    const size_t size = raftwire::payload_size(m);
    EXPECT_GT(size, 0u);
    std::vector<uint8_t> payload(size);
    EXPECT_EQ(raftwire::encode(m, payload), size);
    std::vector<std::vector<uint8_t>> out;
    FrameHeader h {
        7, 1, 2, epoch, seq, 0, static_cast<uint16_t>(raftwire::fragment_count(size)), static_cast<uint32_t>(size)
    };
    for (uint16_t f = 0; f < h.fragments; ++f) {
        h.fragment = f;
        std::vector<uint8_t> d(raftwire::kMaxDatagram);
        size_t n = raftwire::seal(h, payload, key, d);
        EXPECT_GT(n, 0u);
        EXPECT_LE(n, raftwire::kMaxDatagram);
        d.resize(n);
        out.push_back(std::move(d));
    }
    return out;
}

struct Receiver {
    std::vector<uint8_t> storage = std::vector<uint8_t>(1 << 20);
    Reassembler r { storage };
    // Feeds one datagram; the decoded message when it completes one.
    bool feed(const std::vector<uint8_t>& d, raft_message& out, Reassembler::Result* result = nullptr) {
        FrameHeader h;
        std::span<const uint8_t> slice;
        EXPECT_EQ(raftwire::open(d, kKey, h, slice), Verdict::Accepted);
        auto res = r.feed(h, slice);
        if (result)
            *result = res;
        if (res != Reassembler::Result::Complete)
            return false;
        EXPECT_EQ(raftwire::decode(r.message(), out), Verdict::Accepted);
        return true;
    }
};

raft_message through_the_wire(const raft_message& m, bool shuffle = false) {
    auto ds = datagrams(m, 3, 1);
    if (shuffle) {
        std::mt19937 rng(5);
        std::shuffle(ds.begin(), ds.end(), rng);
        ds.push_back(ds.front()); // a duplicate on the way too
    }
    Receiver rx;
    raft_message out {};
    int completed = 0;
    for (const auto& d : ds) {
        raft_message got {};
        if (rx.feed(d, got)) {
            out = got;
            ++completed;
        }
    }
    EXPECT_EQ(completed, 1);
    return out;
}

TEST(RaftWire, SmallMessagesRoundTrip) {
    raft_message m {};
    m.type = RAFT_REQUEST_VOTE;
    m.request_vote = { 0, 9, 3, 1234567890123ull, 8, true, true };
    raft_message got = through_the_wire(m);
    EXPECT_EQ(got.type, RAFT_REQUEST_VOTE);
    EXPECT_EQ(got.request_vote.term, 9u);
    EXPECT_EQ(got.request_vote.candidate_id, 3u);
    EXPECT_EQ(got.request_vote.last_log_index, 1234567890123ull);
    EXPECT_EQ(got.request_vote.last_log_term, 8u);
    EXPECT_TRUE(got.request_vote.disrupt_leader);
    EXPECT_TRUE(got.request_vote.pre_vote);

    m = raft_message {};
    m.type = RAFT_REQUEST_VOTE_RESULT;
    m.request_vote_result = { 0, 11, true, false, 3, 65535 };
    got = through_the_wire(m);
    EXPECT_EQ(got.request_vote_result.term, 11u);
    EXPECT_TRUE(got.request_vote_result.vote_granted);
    EXPECT_FALSE(got.request_vote_result.pre_vote);
    EXPECT_EQ(got.request_vote_result.features, 3);
    EXPECT_EQ(got.request_vote_result.capacity, 65535);

    m = raft_message {};
    m.type = RAFT_APPEND_ENTRIES_RESULT;
    m.append_entries_result = { 1, 12, 40, 39, 1, 2 };
    got = through_the_wire(m);
    EXPECT_EQ(got.append_entries_result.version, 1);
    EXPECT_EQ(got.append_entries_result.rejected, 40u);
    EXPECT_EQ(got.append_entries_result.last_log_index, 39u);

    m = raft_message {};
    m.type = RAFT_TIMEOUT_NOW;
    m.timeout_now = { 0, 13, 77, 12 };
    got = through_the_wire(m);
    EXPECT_EQ(got.timeout_now.term, 13u);
    EXPECT_EQ(got.timeout_now.last_log_index, 77u);
    EXPECT_EQ(got.timeout_now.last_log_term, 12u);
}

TEST(RaftWire, EntriesAcrossManyFragmentsRoundTrip) {
    std::vector<std::vector<uint8_t>> data;
    std::mt19937 rng(1);
    for (int i = 0; i < 40; ++i) {
        std::vector<uint8_t> d(i == 3 ? 0 : 1 + rng() % 3000);
        for (auto& b : d)
            b = static_cast<uint8_t>(rng());
        data.push_back(std::move(d));
    }
    std::vector<raft_entry> entries(data.size());
    for (size_t i = 0; i < data.size(); ++i)
        entries[i] = { 5 + i, i % 3 == 0 ? RAFT_BARRIER : RAFT_COMMAND, { data[i].data(), data[i].size() }, nullptr };
    raft_message m {};
    m.type = RAFT_APPEND_ENTRIES;
    m.append_entries = { 0, 21, 100, 20, 99, entries.data(), static_cast<unsigned>(entries.size()) };
    ASSERT_GT(raftwire::fragment_count(raftwire::payload_size(m)), 30u) << "the message spans many datagrams";
    raft_message got = through_the_wire(m, true);
    ASSERT_EQ(got.type, RAFT_APPEND_ENTRIES);
    EXPECT_EQ(got.append_entries.term, 21u);
    EXPECT_EQ(got.append_entries.prev_log_index, 100u);
    EXPECT_EQ(got.append_entries.prev_log_term, 20u);
    EXPECT_EQ(got.append_entries.leader_commit, 99u);
    ASSERT_EQ(got.append_entries.n_entries, entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
        const raft_entry& e = got.append_entries.entries[i];
        EXPECT_EQ(e.term, entries[i].term);
        EXPECT_EQ(e.type, entries[i].type);
        ASSERT_EQ(e.buf.len, data[i].size());
        if (e.buf.len) {
            EXPECT_EQ(0, std::memcmp(e.buf.base, data[i].data(), e.buf.len)) << "entry " << i;
        }
        EXPECT_EQ(e.batch, got.append_entries.entries[0].batch) << "one batch, as the engine frees it";
    }
    raftwire::release(got);
}

TEST(RaftWire, SnapshotWithConfigurationRoundTrips) {
    raft_configuration conf;
    raft_configuration_init(&conf);
    ASSERT_EQ(raft_configuration_add(&conf, 1, "node-1", RAFT_VOTER), 0);
    ASSERT_EQ(raft_configuration_add(&conf, 2, "node-2", RAFT_STANDBY), 0);
    ASSERT_EQ(raft_configuration_add(&conf, 5, "node-5", RAFT_SPARE), 0);
    std::vector<uint8_t> data(100000);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>(i * 7);
    raft_message m {};
    m.type = RAFT_INSTALL_SNAPSHOT;
    m.install_snapshot.term = 4;
    m.install_snapshot.last_index = 500;
    m.install_snapshot.last_term = 3;
    m.install_snapshot.conf = conf;
    m.install_snapshot.conf_index = 450;
    m.install_snapshot.data = { data.data(), data.size() };
    raft_message got = through_the_wire(m, true);
    ASSERT_EQ(got.type, RAFT_INSTALL_SNAPSHOT);
    const auto& s = got.install_snapshot;
    EXPECT_EQ(s.term, 4u);
    EXPECT_EQ(s.last_index, 500u);
    EXPECT_EQ(s.last_term, 3u);
    EXPECT_EQ(s.conf_index, 450u);
    ASSERT_EQ(s.conf.n, 3u);
    EXPECT_EQ(s.conf.servers[2].id, 5u);
    EXPECT_STREQ(s.conf.servers[1].address, "node-2");
    EXPECT_EQ(s.conf.servers[1].role, RAFT_STANDBY);
    ASSERT_EQ(s.data.len, data.size());
    EXPECT_EQ(0, std::memcmp(s.data.base, data.data(), data.size()));
    raftwire::release(got);
    raft_configuration_close(&conf);
}

TEST(RaftWire, OnlyTheKeyOpensADatagram) {
    raft_message m {};
    m.type = RAFT_TIMEOUT_NOW;
    m.timeout_now = { 0, 1, 2, 3 };
    auto d = datagrams(m, 1, 1).front();
    FrameHeader h;
    std::span<const uint8_t> slice;
    EXPECT_EQ(raftwire::open(d, kOtherKey, h, slice), Verdict::BadMac);
    for (size_t i = 4; i < d.size(); ++i) { // every byte after the magic is covered by the tag
        auto bad = d;
        bad[i] ^= 0x01;
        EXPECT_EQ(raftwire::open(bad, kKey, h, slice), Verdict::BadMac) << "byte " << i;
    }
    auto bad = d;
    bad[0] ^= 0x80;
    EXPECT_EQ(raftwire::open(bad, kKey, h, slice), Verdict::Malformed) << "not ours at all";
    EXPECT_EQ(raftwire::open(std::span(d).first(20), kKey, h, slice), Verdict::Malformed);
    EXPECT_EQ(raftwire::open(d, kKey, h, slice), Verdict::Accepted);
    EXPECT_EQ(h.group, 7u);
    EXPECT_EQ(h.from, 1u);
    EXPECT_EQ(h.to, 2u);
    // Routing reads the group without the key; anything else reads as no group.
    EXPECT_EQ(raftwire::peek_group(d), 7u);
    EXPECT_EQ(raftwire::peek_group(bad), 0u);
    EXPECT_EQ(raftwire::peek_group(std::span(d).first(20)), 0u);
}

// A datagram sealed over whatever header fields a (keyed but wrong) sender chose.
std::vector<uint8_t> forged(FrameHeader h, std::span<const uint8_t> slice, uint8_t version = raftwire::kVersion) {
    std::vector<uint8_t> d;
    auto be = [&](uint64_t v, int n) {
        for (int i = n - 1; i >= 0; --i)
            d.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    be(raftwire::kMagic, 4);
    be(version, 1);
    be(h.group, 8);
    be(h.from, 8);
    be(h.to, 8);
    be(h.epoch, 8);
    be(h.seq, 8);
    be(h.fragment, 2);
    be(h.fragments, 2);
    be(h.total, 4);
    d.insert(d.end(), slice.begin(), slice.end());
    auto tag = crypto::hmac_sha256(kKey, d);
    d.insert(d.end(), tag.begin(), tag.end());
    return d;
}

TEST(RaftWire, AuthenticHeadersThatDoNotAddUpAreRefused) {
    std::vector<uint8_t> body(100, 1);
    FrameHeader h;
    std::span<const uint8_t> slice;
    auto verdict = [&](FrameHeader f, size_t n, uint8_t version = raftwire::kVersion) {
        return raftwire::open(forged(f, std::span(body).first(n), version), kKey, h, slice);
    };
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 1, 0, 1, 100 }, 100), Verdict::Accepted);
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 1, 0, 1, 100 }, 100, 2), Verdict::WrongVersion);
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 1, 0, 1, 100 }, 99), Verdict::Malformed) << "shorter than its total";
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 1, 0, 2, 100 }, 100), Verdict::Malformed) << "fragment count off";
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 1, 1, 1, 100 }, 100), Verdict::Malformed) << "fragment past the count";
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 0, 0, 1, 100 }, 100), Verdict::Malformed) << "sequence numbers start at 1";
    EXPECT_EQ(verdict({ 1, 1, 2, 1, 1, 1, 2, 2000 }, 100), Verdict::Malformed) << "a last fragment of the wrong size";
}

TEST(RaftWire, EachSendersOrderIsKept) {
    raft_message m {};
    m.type = RAFT_TIMEOUT_NOW;
    Receiver rx;
    raft_message got;
    Reassembler::Result res;
    m.timeout_now.term = 2;
    auto second = datagrams(m, 1, 2).front();
    m.timeout_now.term = 1;
    auto first = datagrams(m, 1, 1).front();
    EXPECT_TRUE(rx.feed(second, got));
    EXPECT_EQ(got.timeout_now.term, 2u);
    EXPECT_FALSE(rx.feed(first, got, &res)) << "overtaken by a newer message: dropped";
    EXPECT_EQ(res, Reassembler::Result::Stale);
    EXPECT_FALSE(rx.feed(second, got, &res)) << "a duplicate";
    EXPECT_EQ(res, Reassembler::Result::Stale);
    m.timeout_now.term = 3;
    EXPECT_TRUE(rx.feed(datagrams(m, 2, 1).front(), got)) << "a new life starts its count again";
    EXPECT_EQ(got.timeout_now.term, 3u);
    EXPECT_FALSE(rx.feed(datagrams(m, 1, 9).front(), got, &res)) << "an older life";
    EXPECT_EQ(res, Reassembler::Result::Stale);
}

// The datagrams of an AppendEntries of one 5,000-byte entry (five fragments), epoch 1, seq 1.
std::vector<std::vector<uint8_t>> five_fragments() {
    std::vector<uint8_t> data(5000, 9);
    raft_entry e { 1, RAFT_COMMAND, { data.data(), data.size() }, nullptr };
    raft_message big {};
    big.type = RAFT_APPEND_ENTRIES;
    big.append_entries.n_entries = 1;
    big.append_entries.entries = &e;
    return datagrams(big, 1, 1);
}

TEST(RaftWire, AMessageInPiecesGivesWayToANewerOne) {
    auto pieces = five_fragments();
    ASSERT_GT(pieces.size(), 2u);
    raft_message small {};
    small.type = RAFT_TIMEOUT_NOW;
    auto newer = datagrams(small, 1, 2).front();
    Receiver rx;
    raft_message got;
    Reassembler::Result res;
    EXPECT_FALSE(rx.feed(pieces[0], got, &res));
    EXPECT_EQ(res, Reassembler::Result::Partial);
    EXPECT_TRUE(rx.feed(newer, got));
    EXPECT_EQ(rx.r.dropped_partial(), 1u);
    for (size_t i = 1; i < pieces.size(); ++i) {
        EXPECT_FALSE(rx.feed(pieces[i], got, &res));
        EXPECT_EQ(res, Reassembler::Result::Stale);
    }
}

TEST(RaftWire, TheReassemblerRefusesWhatDoesNotFitOrContradictsItself) {
    auto pieces = five_fragments();
    std::vector<uint8_t> small_storage(1000);
    Reassembler tight(small_storage);
    FrameHeader h;
    std::span<const uint8_t> slice;
    ASSERT_EQ(raftwire::open(pieces[0], kKey, h, slice), Verdict::Accepted);
    EXPECT_EQ(tight.feed(h, slice), Reassembler::Result::Refused) << "larger than the storage";

    std::vector<uint8_t> storage(1 << 16);
    Reassembler r(storage);
    ASSERT_EQ(r.feed(h, slice), Reassembler::Result::Partial);
    FrameHeader liar = h;
    liar.total = h.total + 1; // the same message, another size
    liar.fragment = 1;
    std::vector<uint8_t> piece(raftwire::kFragmentPayload, 0);
    EXPECT_EQ(r.feed(liar, piece), Reassembler::Result::Refused);
    EXPECT_EQ(r.dropped_partial(), 1u);
}

// Authentic payloads that do not add up: refused, and nothing leaks (ASan).
TEST(RaftWire, MalformedPayloadsAreRefused) {
    raft_message out;
    auto refuse = [&](std::vector<uint8_t> p) { return raftwire::decode(p, out) == Verdict::Malformed; };
    EXPECT_TRUE(refuse({}));
    EXPECT_TRUE(refuse({ 0 }));
    EXPECT_TRUE(refuse({ 7 }));
    // A valid TimeoutNow, then one byte too many and one too few.
    raft_message m {};
    m.type = RAFT_TIMEOUT_NOW;
    std::vector<uint8_t> p(raftwire::payload_size(m));
    raftwire::encode(m, p);
    EXPECT_EQ(raftwire::decode(p, out), Verdict::Accepted);
    auto longer = p;
    longer.push_back(0);
    EXPECT_TRUE(refuse(longer));
    EXPECT_TRUE(refuse(std::vector<uint8_t>(p.begin(), p.end() - 1)));
    // RequestVote with an undefined flag bit.
    m = raft_message {};
    m.type = RAFT_REQUEST_VOTE;
    p.assign(raftwire::payload_size(m), 0);
    raftwire::encode(m, p);
    p.back() = 4;
    EXPECT_TRUE(refuse(p));
    // AppendEntries: a count beyond what follows, a bad entry type, an entry longer than the rest,
    // and bytes after the last entry (entries already allocated: freed again).
    std::vector<uint8_t> data(10, 1);
    raft_entry e { 1, RAFT_COMMAND, { data.data(), data.size() }, nullptr };
    m = raft_message {};
    m.type = RAFT_APPEND_ENTRIES;
    m.append_entries.n_entries = 1;
    m.append_entries.entries = &e;
    std::vector<uint8_t> ae(raftwire::payload_size(m));
    raftwire::encode(m, ae);
    const size_t count_at = 2 + 8 * 4;
    auto many = ae;
    many[count_at + 3] = 200;
    EXPECT_TRUE(refuse(many));
    auto badtype = ae;
    badtype[count_at + 4 + 8] = 9;
    EXPECT_TRUE(refuse(badtype));
    auto toolong = ae;
    toolong[count_at + 4 + 8 + 1 + 3] = 11;
    EXPECT_TRUE(refuse(toolong));
    auto trailing = ae;
    trailing.push_back(1);
    EXPECT_TRUE(refuse(trailing));
    // InstallSnapshot with a configuration upstream cannot read.
    m = raft_message {};
    m.type = RAFT_INSTALL_SNAPSHOT;
    raft_configuration_init(&m.install_snapshot.conf);
    raft_configuration_add(&m.install_snapshot.conf, 1, "a", RAFT_VOTER);
    std::vector<uint8_t> snap(raftwire::payload_size(m));
    raftwire::encode(m, snap);
    raft_configuration_close(&m.install_snapshot.conf);
    const size_t conf_at = 2 + 8 * 4 + 4;
    auto badconf = snap;
    badconf[conf_at] ^= 0xff; // the configuration's own format version
    EXPECT_TRUE(refuse(badconf));
    EXPECT_EQ(raftwire::decode(snap, out), Verdict::Accepted);
    raftwire::release(out);
}

// Random payloads and random mutations of valid ones: never a crash or a leak, and whatever is
// accepted encodes again.
TEST(RaftWire, RandomPayloadsAreSurvived) {
    std::mt19937 rng(77);
    std::vector<uint8_t> data(300, 3);
    raft_entry es[3] = { { 1, RAFT_COMMAND, { data.data(), 100 }, nullptr },
                         { 2, RAFT_CHANGE, { data.data(), 0 }, nullptr },
                         { 2, RAFT_BARRIER, { data.data(), 300 }, nullptr } };
    raft_message m {};
    m.type = RAFT_APPEND_ENTRIES;
    m.append_entries.n_entries = 3;
    m.append_entries.entries = es;
    std::vector<uint8_t> valid(raftwire::payload_size(m));
    raftwire::encode(m, valid);
    int accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        std::vector<uint8_t> p;
        if (i % 2) {
            p.resize(rng() % 64);
            for (auto& b : p)
                b = static_cast<uint8_t>(rng());
            if (!p.empty())
                p[0] = static_cast<uint8_t>(1 + rng() % 6);
        } else {
            p = valid;
            for (int k = 0, n = 1 + rng() % 3; k < n; ++k)
                p[rng() % p.size()] = static_cast<uint8_t>(rng());
            if (rng() % 4 == 0)
                p.resize(rng() % p.size());
        }
        raft_message out;
        if (raftwire::decode(p, out) != Verdict::Accepted)
            continue;
        ++accepted;
        std::vector<uint8_t> again(raftwire::payload_size(out));
        EXPECT_EQ(raftwire::encode(out, again), again.size());
        raftwire::release(out);
    }
    EXPECT_GT(accepted, 100);
}

} // namespace

// lib/raft/log_records: a member's durable state as write-ahead log records. Round trips, refusals
// of what does not add up, and the property the kernel relies on: replaying any prefix of the
// records a member wrote (what a crash leaves) gives exactly its state after those requests.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include <raft/log_records.h>

namespace {

using raftlog::Decoded;
using raftlog::EntryView;
using raftlog::Kind;

struct Entry {
    uint64_t term;
    uint8_t type;
    std::vector<std::byte> data;
    bool operator==(const Entry&) const = default;
};

// The state replay rebuilds, and the model the test's member keeps.
struct Snapshot {
    uint64_t index = 0, term = 0, conf_index = 0;
    std::vector<std::byte> conf, data;
    bool operator==(const Snapshot&) const = default;
};

struct State final : raftlog::Target {
    uint64_t t = 0, v = 0, first = 1;
    std::vector<Entry> log;
    Snapshot snap;
    uint64_t term() const override { return t; }
    uint64_t start() const override { return first; }
    uint64_t next_index() const override { return first + log.size(); }
    bool set_term(uint64_t term, uint64_t vote) override {
        t = term;
        v = vote;
        return true;
    }
    bool append(const EntryView& e) override {
        log.push_back({ e.term, e.type, { e.data.begin(), e.data.end() } });
        return true;
    }
    bool truncate(uint64_t index) override {
        log.resize(index - first);
        return true;
    }
    uint64_t snapshot_index() const override { return snap.index; }
    bool set_snapshot(const raftlog::SnapshotView& s, uint64_t start) override {
        snap = { s.index, s.term, s.conf_index, { s.conf.begin(), s.conf.end() }, { s.data.begin(), s.data.end() } };
        if (start >= next_index())
            log.clear();
        else
            log.erase(log.begin(), log.begin() + static_cast<long>(start - first));
        first = start;
        return true;
    }
    bool operator==(const State& o) const {
        return t == o.t && v == o.v && first == o.first && log == o.log && snap == o.snap;
    }
};

struct Record {
    Kind kind;
    std::vector<std::byte> bytes;
};

Decoded decoded(const Record& r) {
    auto d = raftlog::decode(r.kind, r.bytes);
    EXPECT_TRUE(d.ok());
    return *d;
}

Record term_record(uint64_t group, uint64_t term, uint64_t vote) {
    Record r { Kind::Term, std::vector<std::byte>(raftlog::kTermBytes) };
    EXPECT_TRUE(raftlog::encode_term(r.bytes, group, term, vote).ok());
    return r;
}

Record append_record(uint64_t group, uint64_t index, const std::vector<Entry>& entries) {
    std::vector<EntryView> views;
    for (const Entry& e : entries)
        views.push_back({ e.term, e.type, e.data });
    Record r { Kind::Append, std::vector<std::byte>(raftlog::append_bytes(views)) };
    auto n = raftlog::encode_append(r.bytes, group, index, views);
    EXPECT_TRUE(n.ok());
    EXPECT_EQ(*n, r.bytes.size());
    return r;
}

Record truncate_record(uint64_t group, uint64_t index) {
    Record r { Kind::Truncate, std::vector<std::byte>(raftlog::kTruncateBytes) };
    EXPECT_TRUE(raftlog::encode_truncate(r.bytes, group, index).ok());
    return r;
}

Record snapshot_record(uint64_t group, const Snapshot& s, uint32_t trailing) {
    const raftlog::SnapshotView v { s.index, s.term, s.conf_index, s.conf, s.data };
    Record r { Kind::Snapshot, std::vector<std::byte>(raftlog::snapshot_bytes(s.conf.size(), s.data.size())) };
    EXPECT_TRUE(raftlog::encode_snapshot(r.bytes, group, v, trailing).ok());
    return r;
}

std::vector<std::byte> bytes_of(const char* s) {
    std::vector<std::byte> b(std::strlen(s));
    std::memcpy(b.data(), s, b.size());
    return b;
}

TEST(RaftLog, RecordsRoundTrip) {
    Decoded t = decoded(term_record(7, 12, 3));
    EXPECT_EQ(t.group, 7u);
    EXPECT_EQ(t.term, 12u);
    EXPECT_EQ(t.vote, 3u);
    Decoded c = decoded(truncate_record(7, 40));
    EXPECT_EQ(c.index, 40u);
    std::vector<Entry> entries = { { 5, 1, bytes_of("one") }, { 5, 2, {} }, { 6, 3, bytes_of("a config of 17 b") } };
    const Record record = append_record(9, 21, entries); // the decoded entries point into it
    Decoded a = decoded(record);
    EXPECT_EQ(a.group, 9u);
    EXPECT_EQ(a.index, 21u);
    ASSERT_EQ(a.count, 3u);
    raftlog::EntryReader r(a);
    EntryView e;
    for (const Entry& want : entries) {
        ASSERT_TRUE(r.next(e));
        EXPECT_EQ(e.term, want.term);
        EXPECT_EQ(e.type, want.type);
        EXPECT_EQ(std::vector<std::byte>(e.data.begin(), e.data.end()), want.data);
    }
    EXPECT_FALSE(r.next(e));
}

TEST(RaftLog, EncodingRefusesWhatNoMemberWrites) {
    std::vector<std::byte> out(256);
    EXPECT_EQ(raftlog::encode_term(out, 1, 0, 0).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(raftlog::encode_truncate(out, 1, 0).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(raftlog::encode_append(out, 1, 1, {}).error(), ktl::Error::InvalidArgs);
    const EntryView bad_type { 1, 9, {} };
    EXPECT_EQ(raftlog::encode_append(out, 1, 1, { &bad_type, 1 }).error(), ktl::Error::InvalidArgs);
    const EntryView zero_term { 0, 1, {} };
    EXPECT_EQ(raftlog::encode_append(out, 1, 1, { &zero_term, 1 }).error(), ktl::Error::InvalidArgs);
    const EntryView fine { 1, 1, {} };
    EXPECT_EQ(raftlog::encode_append({ out.data(), 20 }, 1, 1, { &fine, 1 }).error(), ktl::Error::OutOfRange);
    EXPECT_EQ(raftlog::encode_term({ out.data(), 8 }, 1, 1, 0).error(), ktl::Error::OutOfRange);
}

TEST(RaftLog, DecodingRefusesWhatDoesNotAddUp) {
    const Record a = append_record(1, 5, { { 2, 1, bytes_of("hello") }, { 2, 1, bytes_of("world!!!") } });
    EXPECT_TRUE(raftlog::decode(Kind::Append, a.bytes).ok());
    // Every cut short of the whole, and one byte more, is refused.
    for (size_t n = 0; n < a.bytes.size(); ++n)
        EXPECT_FALSE(raftlog::decode(Kind::Append, { a.bytes.data(), n }).ok()) << n;
    std::vector<std::byte> longer = a.bytes;
    longer.resize(longer.size() + 8);
    EXPECT_FALSE(raftlog::decode(Kind::Append, longer).ok());
    // Each field out of its range: the count, the reserved word, an entry's term, type, zero
    // bytes, length and padding.
    auto mutated = [&](size_t at, std::byte to) {
        std::vector<std::byte> b = a.bytes;
        b[at] = to;
        return raftlog::decode(Kind::Append, b).ok();
    };
    EXPECT_FALSE(mutated(16, std::byte(3)));          // count 3, two entries there
    EXPECT_FALSE(mutated(20, std::byte(1)));          // reserved
    EXPECT_FALSE(mutated(24 + 8, std::byte(4)));      // entry type 4
    EXPECT_FALSE(mutated(24 + 9, std::byte(1)));      // its zero bytes
    EXPECT_FALSE(mutated(24 + 12, std::byte(200)));   // its length past the record
    EXPECT_FALSE(mutated(24 + 16 + 5, std::byte(1))); // its padding
    std::vector<std::byte> zero_term = a.bytes;
    std::memset(zero_term.data() + 24, 0, 8);
    EXPECT_FALSE(raftlog::decode(Kind::Append, zero_term).ok());
    std::vector<std::byte> zero_index = a.bytes;
    std::memset(zero_index.data() + 8, 0, 8);
    EXPECT_FALSE(raftlog::decode(Kind::Append, zero_index).ok());
    // Fixed-size records: exactly their size, and no zero term or index.
    const Record t = term_record(1, 4, 0);
    EXPECT_FALSE(raftlog::decode(Kind::Term, { t.bytes.data(), t.bytes.size() - 1 }).ok());
    std::vector<std::byte> no_term = t.bytes;
    std::memset(no_term.data() + 8, 0, 8);
    EXPECT_FALSE(raftlog::decode(Kind::Term, no_term).ok());
    const Record c = truncate_record(1, 4);
    EXPECT_FALSE(raftlog::decode(Kind::Truncate, t.bytes).ok());
    EXPECT_FALSE(raftlog::decode(Kind::Term, c.bytes).ok());
    EXPECT_FALSE(raftlog::decode(static_cast<Kind>(9), c.bytes).ok());
}

TEST(RaftLog, SnapshotRecordsRoundTripAndWhatDoesNotAddUpIsRefused) {
    Snapshot s { 40, 3, 12, bytes_of("configuration"), bytes_of("state!") };
    const Record r = snapshot_record(9, s, 5);
    auto d = raftlog::decode(Kind::Snapshot, r.bytes);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->group, 9u);
    EXPECT_EQ(d->trailing, 5u);
    EXPECT_EQ(d->snapshot.index, 40u);
    EXPECT_EQ(d->snapshot.term, 3u);
    EXPECT_EQ(d->snapshot.conf_index, 12u);
    EXPECT_TRUE(std::equal(d->snapshot.conf.begin(), d->snapshot.conf.end(), s.conf.begin(), s.conf.end()));
    EXPECT_TRUE(std::equal(d->snapshot.data.begin(), d->snapshot.data.end(), s.data.begin(), s.data.end()));
    for (size_t cut = 0; cut < r.bytes.size(); ++cut)
        EXPECT_FALSE(raftlog::decode(Kind::Snapshot, { r.bytes.data(), cut }).ok()) << "cut at " << cut;
    auto mutated = [&](size_t at, std::byte v) {
        auto b = r.bytes;
        b[at] = v;
        return raftlog::decode(Kind::Snapshot, b).ok();
    };
    EXPECT_FALSE(mutated(24, std::byte(41))) << "a configuration index past the snapshot's";
    EXPECT_FALSE(mutated(44, std::byte(1))) << "the reserved word";
    EXPECT_FALSE(mutated(48 + 13, std::byte(1))) << "the configuration's padding";
    EXPECT_FALSE(mutated(36, std::byte(0))) << "a configuration length that does not add up";
    std::vector<std::byte> out(r.bytes.size());
    EXPECT_FALSE(raftlog::encode_snapshot(out, 1, { 0, 1, 1, s.conf, {} }, 0).ok()) << "index 0";
    EXPECT_FALSE(raftlog::encode_snapshot(out, 1, { 5, 1, 1, {}, {} }, 0).ok()) << "no configuration";
    // Replay: a snapshot older than the one held is refused.
    State st;
    ASSERT_EQ(raftlog::replay(decoded(term_record(9, 3, 0)), st), ktl::Error::None);
    ASSERT_EQ(raftlog::replay(decoded(snapshot_record(9, s, 0)), st), ktl::Error::None);
    EXPECT_EQ(st.start(), 41u);
    EXPECT_EQ(st.next_index(), 41u);
    s.index = 30;
    s.conf_index = 3;
    EXPECT_EQ(raftlog::replay(decoded(snapshot_record(9, s, 0)), st), ktl::Error::Corrupt);
    EXPECT_EQ(raftlog::replay(decoded(append_record(9, 40, { { 3, 1, {} } })), st), ktl::Error::Corrupt)
        << "an entry the snapshot covers";
    EXPECT_EQ(raftlog::replay(decoded(append_record(9, 41, { { 3, 1, {} } })), st), ktl::Error::None);
}

TEST(RaftLog, ReplayRefusesASequenceNoMemberWrites) {
    State s;
    ASSERT_EQ(raftlog::replay(decoded(term_record(0, 5, 2)), s), ktl::Error::None);
    EXPECT_EQ(raftlog::replay(decoded(term_record(0, 4, 0)), s), ktl::Error::Corrupt) << "a term going back";
    ASSERT_EQ(raftlog::replay(decoded(append_record(0, 1, { { 5, 3, bytes_of("conf") } })), s), ktl::Error::None);
    EXPECT_EQ(raftlog::replay(decoded(append_record(0, 3, { { 5, 1, {} } })), s), ktl::Error::Corrupt) << "a gap";
    EXPECT_EQ(raftlog::replay(decoded(append_record(0, 1, { { 5, 1, {} } })), s), ktl::Error::Corrupt)
        << "over an entry held, without a truncation first";
    EXPECT_EQ(raftlog::replay(decoded(truncate_record(0, 3)), s), ktl::Error::Corrupt) << "past the end";
    EXPECT_EQ(raftlog::replay(decoded(truncate_record(0, 2)), s), ktl::Error::None) << "at the end: nothing to drop";
    EXPECT_EQ(raftlog::replay(decoded(truncate_record(0, 1)), s), ktl::Error::None);
    EXPECT_EQ(s.next_index(), 1u);
}

// A member under a random sequence of requests, as the engine makes them: terms that only grow
// (a vote within a term), appends at the end in batches, truncations of a suffix (a follower told
// its last entries were never committed). Its records replayed from the start up to every point
// give exactly the model's state at that point.
TEST(RaftLog, EveryPrefixOfTheRecordsIsTheStateAtThatPoint) {
    for (uint32_t seed = 1; seed <= 200; ++seed) {
        std::mt19937_64 rng(seed);
        auto below = [&](uint64_t n) { return rng() % n; };
        const uint64_t group = below(4);
        State model;
        std::vector<Record> records;
        std::vector<State> after; // the model after each record
        for (int op = 0; op < 60; ++op) {
            const uint64_t what = below(10);
            if (what < 2 || model.t == 0) {
                const bool new_term = model.t == 0 || below(2) == 0;
                const uint64_t term = new_term ? model.t + 1 + below(3) : model.t;
                const uint64_t vote = below(2) ? 1 + below(5) : 0;
                records.push_back(term_record(group, term, vote));
                model.set_term(term, vote);
            } else if (what < 7) {
                std::vector<Entry> batch;
                for (uint64_t n = 1 + below(4); n > 0; --n) {
                    std::vector<std::byte> data(below(40));
                    for (auto& b : data)
                        b = std::byte(rng());
                    batch.push_back({ model.t, static_cast<uint8_t>(1 + below(3)), data });
                }
                records.push_back(append_record(group, model.next_index(), batch));
                for (const Entry& e : batch)
                    model.append({ e.term, e.type, e.data });
            } else if (what == 8 && model.next_index() > std::max(model.start(), model.snap.index + 1)) {
                // A snapshot taken at an entry the log holds, keeping some trailing entries (as
                // the engine's snapshot_put does), under the simulated disk's rule.
                const uint64_t lo = std::max(model.start(), model.snap.index + 1);
                Snapshot s { lo + below(model.next_index() - lo), 0, 0, bytes_of("conf"), {} };
                s.term = model.t;
                s.conf_index = 1 + below(s.index);
                s.data.resize(below(100));
                for (auto& b : s.data)
                    b = std::byte(rng());
                const uint32_t trailing = static_cast<uint32_t>(1 + below(10));
                records.push_back(snapshot_record(group, s, trailing));
                uint64_t keep_from = s.index >= trailing ? s.index - trailing + 1 : 1;
                keep_from = std::min(keep_from, model.next_index());
                if (keep_from > model.first) {
                    model.log.erase(model.log.begin(), model.log.begin() + static_cast<long>(keep_from - model.first));
                    model.first = keep_from;
                }
                model.snap = s;
            } else if (what == 9 && model.t > 0) {
                // A snapshot installed from the leader: it replaces the whole log.
                Snapshot s { std::max(model.snap.index, model.start()) + below(20), model.t, 1, bytes_of("c"), {} };
                s.index = std::max<uint64_t>(s.index, 1);
                records.push_back(snapshot_record(group, s, 0));
                model.log.clear();
                model.first = s.index + 1;
                model.snap = s;
            } else if (model.next_index() > model.start()) {
                const uint64_t index = model.start() + below(model.next_index() - model.start());
                records.push_back(truncate_record(group, index));
                model.truncate(index);
            } else {
                continue;
            }
            after.push_back(model);
        }
        State replayed;
        for (size_t i = 0; i < records.size(); ++i) {
            auto d = raftlog::decode(records[i].kind, records[i].bytes);
            ASSERT_TRUE(d.ok()) << "seed " << seed << " record " << i;
            ASSERT_EQ(d->group, group);
            ASSERT_EQ(raftlog::replay(*d, replayed), ktl::Error::None) << "seed " << seed << " record " << i;
            ASSERT_TRUE(replayed == after[i]) << "seed " << seed << ": the state after record " << i << " differs";
        }
    }
}

} // namespace

// The directory of replicated collections (lib/raft/directory.h): group ids assigned in apply
// order, placements refused past a node's groups, the choice of a new group's voters, and the
// commands and snapshots decoded from untrusted bytes.
#include <raft/directory.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using raftdir::Directory;

constexpr uint32_t ip(uint8_t last) { return 0x0a000000u | last; } // 10.0.0.last

std::vector<std::byte> snapshot_of(const Directory& d) {
    std::vector<std::byte> out(raftdir::kMaxSnapshot);
    out.resize(d.snapshot(out));
    return out;
}

TEST(RaftDirectory, GroupsAreAssignedInApplyOrderAndNeverReused) {
    Directory a;
    const uint32_t v1[] = { ip(1), ip(2), ip(3) }, v2[] = { ip(2), ip(3), ip(4), ip(5), ip(6) };
    auto e1 = a.place({ "alpha", v1 });
    ASSERT_TRUE(e1.ok());
    EXPECT_EQ((*e1)->group, 1u);
    auto e2 = a.place({ "beta", v2 });
    ASSERT_TRUE(e2.ok());
    EXPECT_EQ((*e2)->group, 2u);
    // The same name again: the first placement stands, no group is used up.
    EXPECT_EQ(a.place({ "alpha", v2 }).error(), ktl::Error::Exists);
    EXPECT_EQ(a.next_group(), 3u);
    ASSERT_TRUE(a.forget({ 1, "alpha" }).ok());
    EXPECT_EQ(a.find("alpha"), nullptr);
    auto again = a.place({ "alpha", v1 });
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->group, 3u) << "a forgotten group's id names a member's state on some disk";
    EXPECT_EQ(a.find("beta")->group, 2u);
}

TEST(RaftDirectory, TheSameCommandsGiveTheSameDirectory) {
    Directory a, b;
    const uint32_t v[] = { ip(9), ip(8), ip(7) };
    for (Directory* d : { &a, &b }) {
        ASSERT_TRUE(d->place({ "x", v }).ok());
        ASSERT_TRUE(d->place({ "y", v }).ok());
        ASSERT_TRUE(d->forget({ 1, "x" }).ok());
        ASSERT_TRUE(d->reassign({ 2, ip(8), ip(20) }).ok());
    }
    EXPECT_EQ(snapshot_of(a), snapshot_of(b));
    const auto* y = a.find("y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->voters[1], ip(20)) << "a replacement takes the dead voter's place in the list";
    EXPECT_FALSE(y->has_voter(ip(8)));
    EXPECT_EQ(y->reassigned, 1u) << "the newcomer joins the running group: it must not bootstrap it";
    EXPECT_EQ(a.find("x"), nullptr);
    Directory c;
    ASSERT_TRUE(c.restore(snapshot_of(a)));
    EXPECT_EQ(c.find("y")->reassigned, 1u) << "a snapshot keeps it";
    ASSERT_TRUE(a.place({ "z", v }).ok());
    EXPECT_EQ(a.find("z")->reassigned, 0u);
}

TEST(RaftDirectory, RefusesWhatDoesNotAddUp) {
    Directory d;
    const uint32_t four[] = { ip(1), ip(2), ip(3), ip(4) }, twice[] = { ip(1), ip(2), ip(1) },
                   zero[] = { ip(1), 0, ip(3) }, ok[] = { ip(1), ip(2), ip(3) };
    EXPECT_EQ(d.place({ "a", four }).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(d.place({ "a", twice }).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(d.place({ "a", zero }).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(d.place({ "", ok }).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(d.place({ std::string(65, 'n'), ok }).error(), ktl::Error::InvalidArgs);
    EXPECT_TRUE(d.place({ std::string(64, 'n'), ok }).ok());
    EXPECT_EQ(d.forget({ 2, std::string(64, 'n') }).error(), ktl::Error::NotFound) << "another group's forget";
    EXPECT_EQ(d.forget({ 1, "other" }).error(), ktl::Error::NotFound);
    EXPECT_EQ(d.reassign({ 1, ip(9), ip(10) }).error(), ktl::Error::NotFound) << "not a voter";
    EXPECT_EQ(d.reassign({ 1, ip(1), ip(2) }).error(), ktl::Error::Exists);
    EXPECT_EQ(d.reassign({ 7, ip(1), ip(10) }).error(), ktl::Error::NotFound);
}

TEST(RaftDirectory, ANodeHoldsAtMostItsMembersAndTheDirectoryItsEntries) {
    Directory d;
    const uint32_t v[] = { ip(1), ip(2), ip(3) };
    for (size_t i = 0; i < raftdir::kMaxGroupsPerNode; ++i)
        ASSERT_TRUE(d.place({ "c" + std::to_string(i), v }).ok());
    EXPECT_EQ(d.groups_held(ip(1)), raftdir::kMaxGroupsPerNode);
    EXPECT_EQ(d.place({ "one-more", v }).error(), ktl::Error::Full);
    const uint32_t w[] = { ip(4), ip(5), ip(1) };
    EXPECT_EQ(d.place({ "one-more", w }).error(), ktl::Error::Full) << "10.0.0.1 runs no more members";
    EXPECT_EQ(d.reassign({ 1, ip(2), ip(1) }).error(), ktl::Error::Exists);
    const raftdir::Entry* mine[raftdir::kMaxGroupsPerNode + 1];
    EXPECT_EQ(d.groups_of(ip(2), mine), raftdir::kMaxGroupsPerNode);
    EXPECT_EQ(d.groups_of(ip(4), mine), 0u);

    Directory many;
    for (uint32_t i = 0; i < raftdir::kMaxEntries; ++i) {
        const uint32_t own[] = { ip(uint8_t(3 * i + 1)), ip(uint8_t(3 * i + 2)), ip(uint8_t(3 * i + 3)) };
        ASSERT_TRUE(many.place({ "n" + std::to_string(i), own }).ok());
    }
    const uint32_t fresh[] = { ip(200), ip(201), ip(202) };
    EXPECT_EQ(many.place({ "n-last", fresh }).error(), ktl::Error::Full);
}

TEST(RaftDirectory, ChoosesItselfThenTheLeastLoadedThenTheLowerAddress) {
    Directory d;
    const uint32_t busy[] = { ip(2), ip(3), ip(4) };
    ASSERT_TRUE(d.place({ "busy", busy }).ok());
    const uint32_t live[] = { ip(4), ip(3), ip(7), ip(2), ip(6), ip(5), ip(5), 0, ip(1) };
    uint32_t out[5];
    ASSERT_TRUE(d.choose(ip(5), live, 3, out).ok());
    EXPECT_EQ(out[0], ip(5));
    EXPECT_EQ(out[1], ip(1)) << "no groups, lowest address (duplicates and self passed over)";
    EXPECT_EQ(out[2], ip(6));
    ASSERT_TRUE(d.choose(ip(5), live, 5, out).ok());
    EXPECT_EQ(out[3], ip(7));
    EXPECT_EQ(out[4], ip(2)) << "then those holding a group, lowest address first";
    // The choice is a placement the directory takes.
    EXPECT_TRUE(d.place({ "new", std::span<const uint32_t>(out, 5) }).ok());

    const uint32_t few[] = { ip(1), ip(5) };
    EXPECT_EQ(d.choose(ip(5), few, 3, out).error(), ktl::Error::Full);
    EXPECT_EQ(d.choose(ip(5), live, 4, out).error(), ktl::Error::InvalidArgs);
    uint32_t small[2];
    EXPECT_EQ(d.choose(ip(5), live, 3, small).error(), ktl::Error::InvalidArgs);
}

TEST(RaftDirectory, ChoosePassesOverNodesThatHoldTheirMost) {
    Directory d;
    const uint32_t v[] = { ip(1), ip(2), ip(3) };
    for (size_t i = 0; i < raftdir::kMaxGroupsPerNode; ++i)
        ASSERT_TRUE(d.place({ "c" + std::to_string(i), v }).ok());
    const uint32_t live[] = { ip(1), ip(2), ip(3), ip(8), ip(9) };
    uint32_t out[3];
    EXPECT_EQ(d.choose(ip(1), live, 3, out).error(), ktl::Error::Full) << "the creator itself is full";
    ASSERT_TRUE(d.choose(ip(10), live, 3, out).ok());
    EXPECT_EQ(out[1], ip(8));
    EXPECT_EQ(out[2], ip(9));
    const uint32_t only_full[] = { ip(1), ip(2), ip(3), ip(8) };
    EXPECT_EQ(d.choose(ip(10), only_full, 3, out).error(), ktl::Error::Full);
}

TEST(RaftDirectory, CommandsRoundTripAndMalformedOnesAreRefused) {
    const uint32_t v[] = { ip(1), ip(2), ip(3), ip(4), ip(5) };
    const raftdir::Place p { "vectors.main", v, 100 };
    std::vector<std::byte> buf(raftdir::place_bytes(p));
    ASSERT_TRUE(raftdir::encode(p, buf));
    uint32_t voters[raftdir::kMaxVoters];
    auto back = raftdir::decode_place(buf, voters);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->name, "vectors.main");
    EXPECT_EQ(back->dim, 100u);
    EXPECT_FALSE(raftdir::encode(raftdir::Place { "vectors.main", v }, buf)) << "a placement names its dimension";
    EXPECT_FALSE(raftdir::encode(raftdir::Place { "vectors.main", v, raftdir::kMaxDim + 1 }, buf));
    ASSERT_EQ(back->voters.size(), 5u);
    EXPECT_EQ(back->voters[4], ip(5));
    EXPECT_FALSE(raftdir::encode(p, std::span<std::byte>(buf).first(buf.size() - 1)));
    // Every shorter or longer record, and each header byte changed, is refused.
    for (size_t n = 0; n < buf.size(); ++n)
        EXPECT_FALSE(raftdir::decode_place(std::span<const std::byte>(buf).first(n), voters)) << n;
    auto longer = buf;
    longer.push_back(std::byte('x'));
    EXPECT_FALSE(raftdir::decode_place(longer, voters));
    for (size_t at : { 0, 1, 3 }) {
        auto bad = buf;
        bad[at] = std::byte(uint8_t(bad[at]) + 1);
        EXPECT_FALSE(raftdir::decode_place(bad, voters)) << at;
    }
    auto dup = buf;
    std::memcpy(dup.data() + raftdir::kPlaceHeader + 4, dup.data() + raftdir::kPlaceHeader, 4);
    EXPECT_FALSE(raftdir::decode_place(dup, voters)) << "a voter twice";

    const raftdir::Forget f { 7, "gone" };
    std::vector<std::byte> fb(raftdir::forget_bytes(f));
    ASSERT_TRUE(raftdir::encode(f, fb));
    auto fback = raftdir::decode_forget(fb);
    ASSERT_TRUE(fback);
    EXPECT_EQ(fback->group, 7u);
    EXPECT_EQ(fback->name, "gone");
    fb[6] = std::byte(1);
    EXPECT_FALSE(raftdir::decode_forget(fb));
    EXPECT_FALSE(raftdir::encode(raftdir::Forget { 0, "gone" }, fb)) << "group 0 is the directory's own";

    std::byte rb[raftdir::kReassignBytes];
    ASSERT_TRUE(raftdir::encode(raftdir::Reassign { 3, ip(1), ip(9) }, rb));
    auto rback = raftdir::decode_reassign(rb);
    ASSERT_TRUE(rback);
    EXPECT_EQ(rback->with, ip(9));
    EXPECT_FALSE(raftdir::encode(raftdir::Reassign { 3, ip(1), ip(1) }, rb));
    EXPECT_FALSE(raftdir::decode_reassign(std::span<const std::byte>(rb).first(11)));
}

TEST(RaftDirectory, SnapshotsRoundTripAndOnlyConsistentOnesAreTaken) {
    Directory d;
    const uint32_t a[] = { ip(1), ip(2), ip(3) }, b[] = { ip(3), ip(4), ip(5), ip(6), ip(7) };
    ASSERT_TRUE(d.place({ "a", a }).ok());
    ASSERT_TRUE(d.place({ "b", b }).ok());
    ASSERT_TRUE(d.place({ "c", a }).ok());
    ASSERT_TRUE(d.forget({ 1, "a" }).ok());
    const auto snap = snapshot_of(d);
    ASSERT_EQ(snap.size(), raftdir::kSnapshotHeader + 2 * raftdir::kSnapshotEntry);
    Directory e;
    ASSERT_TRUE(e.restore(snap));
    EXPECT_EQ(snapshot_of(e), snap);
    EXPECT_EQ(e.next_group(), 4u);
    EXPECT_EQ(e.find("c")->group, 3u);
    std::byte small[8];
    EXPECT_EQ(d.snapshot(small), 0u);

    // Random damage: a snapshot taken is one the commands could have built, and the directory that
    // refused one is unchanged.
    std::mt19937 rng(35);
    size_t taken = 0;
    for (int round = 0; round < 4000; ++round) {
        auto bad = snap;
        const int flips = 1 + int(rng() % 3);
        for (int i = 0; i < flips; ++i)
            bad[rng() % bad.size()] = std::byte(uint8_t(rng()));
        if (rng() % 8 == 0)
            bad.resize(rng() % bad.size());
        Directory f = e;
        if (!f.restore(bad)) {
            EXPECT_EQ(snapshot_of(f), snap);
            continue;
        }
        ++taken;
        EXPECT_EQ(snapshot_of(f), bad) << "what was taken is what was given";
        for (const auto& entry : f.entries()) {
            EXPECT_LT(entry.group, f.next_group());
            EXPECT_TRUE(entry.voter_count == 3 || entry.voter_count == 5);
            EXPECT_EQ(f.find(entry.name_view()), &entry);
        }
    }
    EXPECT_LT(taken, 4000u);
    Directory g;
    auto wrong = snap;
    wrong[0] = std::byte('X');
    EXPECT_FALSE(g.restore(wrong));
    auto twice = snap;
    std::memcpy(twice.data() + raftdir::kSnapshotHeader + raftdir::kSnapshotEntry + raftdir::kSnapshotNameAt,
                twice.data() + raftdir::kSnapshotHeader + raftdir::kSnapshotNameAt, raftdir::kMaxNameLength);
    twice[raftdir::kSnapshotHeader + raftdir::kSnapshotEntry + 5] = twice[raftdir::kSnapshotHeader + 5];
    EXPECT_FALSE(g.restore(twice)) << "a name placed twice";
}

// What a kernel wrote before placements named the dimension is still read: its entries' dim is 0.
TEST(RaftDirectory, VersionOneRecordsAndSnapshotsAreReadWithoutADimension) {
    // kPlace version 1: u8 1 | u8 n | u8 name length | u8 0 | u32 voter[n] | name
    std::vector<std::byte> v1 = { std::byte(1), std::byte(3), std::byte(4), std::byte(0) };
    for (uint32_t i = 1; i <= 3; ++i)
        for (int b = 0; b < 4; ++b)
            v1.push_back(std::byte((ip(i) >> (8 * b)) & 0xff));
    for (char c : std::string("logs"))
        v1.push_back(std::byte(c));
    uint32_t voters[raftdir::kMaxVoters];
    auto p = raftdir::decode_place(v1, voters);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->name, "logs");
    EXPECT_EQ(p->dim, 0u);
    EXPECT_EQ(p->voters[2], ip(3));

    // Snapshot version 1 (entries of 92 bytes, no dim) with that one entry.
    std::vector<std::byte> snap(raftdir::kSnapshotHeader + 92, std::byte(0));
    const uint32_t header[] = { 0x52494452u };
    std::memcpy(snap.data(), header, 4);
    snap[4] = std::byte(1);
    snap[6] = std::byte(1);
    snap[8] = std::byte(2); // next group
    std::byte* e = snap.data() + raftdir::kSnapshotHeader;
    e[0] = std::byte(1); // group 1
    e[4] = std::byte(3);
    e[5] = std::byte(4);
    for (uint32_t i = 0; i < 3; ++i)
        for (int b = 0; b < 4; ++b)
            e[8 + 4 * i + b] = std::byte((ip(i + 1) >> (8 * b)) & 0xff);
    std::memcpy(e + 8 + 4 * raftdir::kMaxVoters, "logs", 4);
    Directory d;
    ASSERT_TRUE(d.restore(snap));
    ASSERT_NE(d.find("logs"), nullptr);
    EXPECT_EQ(d.find("logs")->dim, 0u);
    EXPECT_EQ(d.find("logs")->voters[1], ip(2));
    // Taken again as version 2, with its dimension still unknown.
    const auto again = snapshot_of(d);
    EXPECT_EQ(again.size(), raftdir::kSnapshotHeader + raftdir::kSnapshotEntry);
    Directory e2;
    ASSERT_TRUE(e2.restore(again));
    EXPECT_EQ(e2.find("logs")->group, 1u);
    const uint32_t v[] = { ip(4), ip(5), ip(6) };
    ASSERT_TRUE(e2.place({ "dims", v, 64 }).ok());
    Directory f;
    ASSERT_TRUE(f.restore(snapshot_of(e2)));
    EXPECT_EQ(f.find("dims")->dim, 64u);
}

} // namespace

// Nodes outside group 0 learn the directory from its leader's notices: a notice carries the
// directory whole with the version it was taken at, and one that does not add up changes nothing.
TEST(RaftDirectory, NoticesCarryTheDirectoryAndItsVersion) {
    Directory d;
    const uint32_t a[] = { ip(1), ip(2), ip(3) };
    ASSERT_TRUE(d.place({ "facts", a, 4 }).ok());
    std::vector<uint8_t> notice(raftdir::kMaxNotice);
    const size_t n = d.notice(77, notice);
    ASSERT_GT(n, raftdir::kNoticeHeader);
    notice.resize(n);
    EXPECT_TRUE(raftdir::is_notice(notice));
    Directory heard;
    const auto version = raftdir::take_notice(notice, heard);
    ASSERT_TRUE(version.has_value());
    EXPECT_EQ(*version, 77u);
    ASSERT_NE(heard.find("facts"), nullptr);
    EXPECT_EQ(heard.find("facts")->dim, 4u);
    EXPECT_TRUE(heard.find("facts")->has_voter(ip(2)));

    uint8_t small[raftdir::kNoticeHeader + 4];
    EXPECT_EQ(d.notice(1, small), 0u) << "too small for the snapshot";
    // Damage anywhere in the header, or a length that does not match, is refused whole.
    for (size_t at : { size_t(0), size_t(18), size_t(20), size_t(24) }) {
        auto bad = notice;
        bad[at] ^= 0x5a;
        Directory untouched = heard;
        EXPECT_FALSE(raftdir::take_notice(bad, untouched).has_value()) << "byte " << at;
        EXPECT_NE(untouched.find("facts"), nullptr);
    }
    auto cut = notice;
    cut.pop_back();
    EXPECT_FALSE(raftdir::take_notice(cut, heard).has_value());
    // Other messages on the channel are not notices.
    std::vector<uint8_t> other(notice);
    other[16] = 0x01;
    EXPECT_FALSE(raftdir::is_notice(other));
    EXPECT_FALSE(raftdir::is_notice(std::span<const uint8_t>(notice.data(), 10)));
}

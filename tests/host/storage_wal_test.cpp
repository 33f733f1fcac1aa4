// The storage log against a simulated disk that loses power at every sector-write boundary of a
// workload (exhaustively), with the sector being written at that moment left as it was, torn
// (half old, half new) or garbage: recovery must return exactly the acknowledged commits (an
// unacknowledged one whole or not at all), never what a torn commit left behind, and the log must
// go on correctly after it. Damage in the middle is reported, not skipped; bit flips anywhere
// never crash recovery.
#include <storage/crc32c.h>
#include <storage/wal.h>

#include <gtest/gtest.h>

#include "support/sim_disk.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Commit = std::vector<std::string>; // its records' payloads

// Twelve commits of one to four records, from empty to several sectors long.
std::vector<Commit> workload() {
    std::vector<Commit> w;
    std::mt19937 gen(42);
    for (int c = 0; c < 12; ++c) {
        Commit commit;
        int records = 1 + int(gen() % 4);
        for (int r = 0; r < records; ++r) {
            size_t len = (c == 5 && r == 0) ? 1500 : gen() % 300;
            std::string payload(len, '\0');
            for (auto& ch : payload)
                ch = char('a' + gen() % 26);
            commit.push_back(payload);
        }
        w.push_back(commit);
    }
    return w;
}

std::span<const std::byte> bytes_of(const std::string& s) {
    return { reinterpret_cast<const std::byte*>(s.data()), s.size() };
}

struct Replayed {
    std::vector<std::string> payloads;
    storage::Recovery rep;
};

Replayed recover(SimDisk& disk, std::vector<std::byte>& buffer, uint64_t first, uint64_t count) {
    storage::Wal wal(disk, first, count, 7, buffer);
    Replayed out;
    auto rep = wal.recover([&](const storage::LogRecord& r) {
        out.payloads.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    });
    EXPECT_TRUE(rep.ok());
    out.rep = *rep;
    // Recovery's second walk (the store's, after the audit trail's) visits the same records and
    // ends where the first did, without scanning past the end again.
    storage::Wal again(disk, first, count, 7, buffer);
    std::vector<std::string> payloads;
    auto rep2 = again.recover_again(out.rep, [&](const storage::LogRecord& r) {
        payloads.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    });
    EXPECT_TRUE(rep2.ok());
    EXPECT_EQ(payloads, out.payloads);
    EXPECT_EQ(rep2->commits, out.rep.commits);
    EXPECT_EQ(rep2->tail_lba, out.rep.tail_lba);
    EXPECT_EQ(rep2->damaged, out.rep.damaged);
    EXPECT_EQ(rep2->torn_tail, out.rep.torn_tail);
    EXPECT_EQ(again.next_seq(), wal.next_seq());
    EXPECT_EQ(again.used_sectors(), wal.used_sectors());
    return out;
}

// Runs the workload until the disk dies; the payloads of the acknowledged commits, and of the one
// in flight.
size_t run(SimDisk& disk, std::vector<std::byte>& buffer, const std::vector<Commit>& w, std::vector<std::string>& acked,
           std::vector<std::string>& in_flight) {
    storage::Wal wal(disk, 2, 200, 7, buffer);
    size_t commits = 0;
    for (const auto& commit : w) {
        for (const auto& p : commit)
            EXPECT_TRUE(wal.append(3, bytes_of(p)).ok());
        in_flight = commit;
        if (!wal.commit().ok())
            return commits;
        acked.insert(acked.end(), commit.begin(), commit.end());
        in_flight.clear();
        ++commits;
    }
    return commits;
}

} // namespace

TEST(StorageCrc32c, CheckValue) {
    EXPECT_EQ(storage::crc32c(0, "123456789", 9), 0xE3069283u);
    EXPECT_EQ(storage::crc32c(storage::crc32c(0, "1234", 4), "56789", 5), 0xE3069283u) << "continues";
}

TEST(StorageWal, RecoversExactlyTheAcknowledgedCommitsAfterPowerLossAtEveryWrite) {
    const auto w = workload();
    std::vector<std::byte> buffer(8 * kSector);
    uint64_t total = 0;
    {
        SimDisk disk(256);
        std::vector<std::string> acked, flight;
        ASSERT_EQ(run(disk, buffer, w, acked, flight), w.size());
        total = disk.writes();
    }
    ASSERT_GT(total, 15u);
    size_t cases = 0;
    for (uint64_t k = 0; k <= total; ++k)
        for (Tear tear : { Tear::None, Tear::Half, Tear::Garbage }) {
            SimDisk disk(256);
            disk.crash_at(k, tear);
            std::vector<std::string> acked, flight;
            run(disk, buffer, w, acked, flight);
            disk.power_on();
            Replayed got = recover(disk, buffer, 2, 200);
            // Exactly the acknowledged commits, plus the one in flight only if all of it arrived.
            std::vector<std::string> with_flight = acked;
            with_flight.insert(with_flight.end(), flight.begin(), flight.end());
            EXPECT_TRUE(got.payloads == acked || (!flight.empty() && got.payloads == with_flight))
                << "crash at write " << k << " tear " << int(tear) << ": " << got.payloads.size() << " records, "
                << acked.size() << " acknowledged";
            EXPECT_FALSE(got.rep.damaged) << "a torn tail is not damage, at write " << k;
            // The log goes on: a new commit after recovery, then a second recovery sees all of it,
            // and nothing the torn commit left behind.
            storage::Wal wal(disk, 2, 200, 7, buffer);
            ASSERT_TRUE(wal.recover([](const storage::LogRecord&) {}).ok());
            const std::string after = "after-" + std::to_string(k);
            ASSERT_TRUE(wal.append(4, bytes_of(after)).ok());
            ASSERT_TRUE(wal.commit().ok());
            Replayed again = recover(disk, buffer, 2, 200);
            std::vector<std::string> want = got.payloads;
            want.push_back(after);
            EXPECT_EQ(again.payloads, want) << "after the crash at write " << k << " tear " << int(tear);
            ++cases;
        }
    std::printf(
        "power cut at each of %llu sector writes, 3 ways each: %zu recoveries, each exactly the acknowledged state\n",
        static_cast<unsigned long long>(total + 1), cases);
}

TEST(StorageWal, DamageInTheMiddleIsReportedNotSkipped) {
    const auto w = workload();
    std::vector<std::byte> buffer(8 * kSector);
    SimDisk disk(256);
    std::vector<std::string> acked, flight;
    ASSERT_EQ(run(disk, buffer, w, acked, flight), w.size());
    // Find where the fourth commit starts: replay with a fresh log and count sectors.
    Replayed clean = recover(disk, buffer, 2, 200);
    ASSERT_EQ(clean.payloads, acked);
    EXPECT_EQ(clean.rep.commits, w.size());
    // Flip one bit in every sector the log holds, one at a time.
    size_t damaged = 0, torn = 0;
    for (uint64_t s = 2; s < clean.rep.tail_lba; ++s) {
        // (Bytes 4-7 of a header are its epoch: a flipped bit there must not pass for an end.)
        for (uint32_t at : { 3u, 5u, 30u, 100u, 511u }) {
            SimDisk copy = disk;
            copy.bytes()[s * kSector + at] ^= std::byte { 0x10 };
            Replayed got = recover(copy, buffer, 2, 200);
            ASSERT_LE(got.payloads.size(), acked.size());
            EXPECT_TRUE(std::equal(got.payloads.begin(), got.payloads.end(), acked.begin()))
                << "a prefix, at sector " << s;
            if (got.payloads.size() < acked.size()) {
                // The last commit's epoch turned into a later one reads as a log newer than its
                // superblock: refused by the caller, never taken for a clean end either.
                EXPECT_TRUE(got.rep.damaged || got.rep.torn_tail || got.rep.newer_epoch)
                    << "sector " << s << " offset " << at;
                EXPECT_FALSE(got.rep.stale_end) << "sector " << s << " offset " << at;
                damaged += got.rep.damaged;
                torn += got.rep.torn_tail;
                // Damage before the last commit is never taken for a torn tail.
                if (got.rep.commits + 1 < w.size()) {
                    EXPECT_TRUE(got.rep.damaged) << "sector " << s << " offset " << at;
                }
            }
        }
    }
    EXPECT_GT(damaged, 0u);
    std::printf("bit flips in %llu sectors: %zu reported as damage in the middle, %zu as the last commit torn\n",
                static_cast<unsigned long long>(clean.rep.tail_lba - 2), damaged, torn);
}

TEST(StorageWal, BoundsAndFullRegion) {
    std::vector<std::byte> buffer(3 * kSector); // a commit of two sectors and its end marker
    SimDisk disk(16);
    storage::Wal wal(disk, 0, 4, 7, buffer);
    std::string big(2 * kSector, 'x');
    EXPECT_EQ(wal.append(1, bytes_of(big)).error(), ktl::Error::OutOfRange) << "larger than a commit can be";
    std::string half(600, 'y');
    ASSERT_TRUE(wal.append(1, bytes_of(half)).ok());
    EXPECT_EQ(wal.append(1, bytes_of(half)).error(), ktl::Error::Full) << "commit first";
    ASSERT_TRUE(wal.commit().ok()); // two sectors
    ASSERT_TRUE(wal.append(1, bytes_of(half)).ok());
    ASSERT_TRUE(wal.commit().ok()); // two more: the region is full
    ASSERT_TRUE(wal.append(1, bytes_of(std::string(10, 'z'))).ok());
    EXPECT_EQ(wal.commit().error(), ktl::Error::Full) << "storage_full: nothing half-written";
    EXPECT_EQ(wal.free_sectors(), 0u);
    Replayed got = recover(disk, buffer, 0, 4);
    EXPECT_EQ(got.payloads, (std::vector<std::string> { half, half }));
    EXPECT_EQ(got.rep.next_seq, 3u);
}

// After a checkpoint the log starts over in a new epoch over the old one's sectors: recovery
// returns the new epoch's commits only and calls the old records that follow a clean end (not a
// torn tail, not damage); a power cut in the first commit of the new epoch leaves it empty.
TEST(StorageWal, ANewEpochEndsCleanlyWhereTheOldOneContinues) {
    SimDisk disk(256);
    std::vector<std::byte> buffer(4096);
    {
        storage::Wal wal(disk, 2, 200, 7, buffer);
        for (int c = 0; c < 10; ++c) {
            ASSERT_TRUE(wal.append(3, bytes_of(std::string(700, char('a' + c)))).ok());
            ASSERT_TRUE(wal.commit().ok());
        }
        wal.reset(8);
        EXPECT_EQ(wal.epoch(), 8u);
        EXPECT_EQ(wal.used_sectors(), 0u);
        ASSERT_TRUE(wal.append(3, bytes_of("new")).ok());
        ASSERT_TRUE(wal.commit().ok());
    }
    storage::Wal wal(disk, 2, 200, 8, buffer);
    std::vector<std::string> got;
    auto rep = wal.recover([&](const storage::LogRecord& r) {
        got.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    });
    ASSERT_TRUE(rep.ok());
    EXPECT_EQ(got, std::vector<std::string> { "new" });
    EXPECT_FALSE(rep->torn_tail); // the end marker after "new" hides the old epoch's second sector
    EXPECT_FALSE(rep->damaged);
    // Where an old epoch's header is what follows (no marker: say the region was full), the end is
    // clean too.
    std::vector<std::byte> sector(kSector);
    ASSERT_TRUE(disk.read(3, sector).ok());
    ASSERT_TRUE(disk.read(4, sector).ok()); // commit 1 of epoch 7 starts at sector 4
    ASSERT_TRUE(disk.write(3, sector).ok());
    std::vector<std::string> again;
    rep = wal.recover([&](const storage::LogRecord& r) {
        again.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    });
    ASSERT_TRUE(rep.ok());
    EXPECT_EQ(again, std::vector<std::string> { "new" });
    EXPECT_TRUE(rep->stale_end);
    EXPECT_FALSE(rep->torn_tail);
    EXPECT_FALSE(rep->damaged);
    EXPECT_EQ(rep->next_seq, 2u);
}

// A commit header whose first word reads zero, or whose epoch reads as another one, looks like the
// end of the log; with intact commits after it, it is damage in the middle and must be reported as
// such (nothing after it replayed, nothing taken for a clean end).
TEST(StorageWal, AnEndLookalikeInTheMiddleIsDamage) {
    const auto w = workload();
    std::vector<std::byte> buffer(8 * kSector);
    SimDisk disk(256);
    std::vector<std::string> acked, flight;
    ASSERT_EQ(run(disk, buffer, w, acked, flight), w.size());
    std::vector<uint64_t> starts; // the first sector of every commit
    for (uint64_t s = 2; s < 202; ++s) {
        const std::byte* h = disk.bytes().data() + s * kSector;
        uint32_t magic, epoch;
        uint16_t flags;
        std::memcpy(&magic, h, 4);
        std::memcpy(&epoch, h + 4, 4);
        std::memcpy(&flags, h + 22, 2);
        if (magic == storage::Wal::kMagic && epoch == 7 && (flags & storage::Wal::kFirst))
            starts.push_back(s);
    }
    ASSERT_EQ(starts.size(), w.size());
    for (size_t c = 0; c + 1 < starts.size(); ++c) {
        struct Case {
            const char* what;
            uint32_t offset, value;
        };
        for (Case k : { Case { "a zero first word", 0, 0 }, Case { "an older epoch", 4, 6 },
                        Case { "a newer epoch", 4, 7 | 0x100 } }) {
            SimDisk copy = disk;
            std::memcpy(copy.bytes().data() + starts[c] * kSector + k.offset, &k.value, 4);
            Replayed got = recover(copy, buffer, 2, 200);
            EXPECT_TRUE(got.rep.damaged) << k.what << " in commit " << c;
            EXPECT_FALSE(got.rep.stale_end) << k.what << " in commit " << c;
            EXPECT_EQ(got.rep.commits, c) << k.what << ": the commits before it, no more";
            EXPECT_EQ(got.rep.damaged_seq, got.rep.next_seq);
        }
    }
}

// A log that begins in an epoch after the one it is opened with (its superblock is one checkpoint
// behind) is reported as such, not taken for an empty log.
TEST(StorageWal, ALogOfANewerEpochIsNotAnEmptyOne) {
    SimDisk disk(256);
    std::vector<std::byte> buffer(4096);
    {
        storage::Wal wal(disk, 2, 200, 8, buffer);
        for (int c = 0; c < 3; ++c) {
            ASSERT_TRUE(wal.append(3, bytes_of(std::string(100, char('a' + c)))).ok());
            ASSERT_TRUE(wal.commit().ok());
        }
    }
    storage::Wal wal(disk, 2, 200, 7, buffer);
    size_t seen = 0;
    auto rep = wal.recover([&](const storage::LogRecord&) { ++seen; });
    ASSERT_TRUE(rep.ok());
    EXPECT_EQ(seen, 0u);
    EXPECT_TRUE(rep->newer_epoch);
    EXPECT_EQ(rep->found_epoch, 8u);
    EXPECT_FALSE(rep->stale_end);
    EXPECT_FALSE(rep->torn_tail);
}

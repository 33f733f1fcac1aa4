// The vector store's log records: each kind round-trips exactly, and decoding refuses anything
// whose sizes, name or type do not add up (the log's CRCs protect against the disk, not against a
// record written by another build or a bug).
#include <storage/records.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace storage;

TEST(StorageRecords, CreateRoundTrips) {
    std::vector<std::byte> buf(kCreateRecordBytes);
    CreateRecord in { 384, 1, 12, 150, 5000, 256, 0 };
    auto n = encode_create(buf, "docs.v2", in);
    ASSERT_TRUE(n);
    ASSERT_EQ(*n, kCreateRecordBytes);
    auto d = decode_record(uint16_t(RecordType::Create), buf);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "docs.v2");
    EXPECT_EQ(d->create.dim, 384u);
    EXPECT_EQ(d->create.metric, 1u);
    EXPECT_EQ(d->create.m, 12u);
    EXPECT_EQ(d->create.ef_construction, 150u);
    EXPECT_EQ(d->create.max_elements, 5000u);
    EXPECT_EQ(d->create.max_ef, 256u);
}

TEST(StorageRecords, UpsertRoundTripsIdsAndVectorsExactly) {
    const uint32_t dim = 5, count = 3;
    uint64_t ids[count] = { 7, 1ull << 53, 0 };
    float vec[count * dim];
    for (uint32_t i = 0; i < count * dim; ++i)
        vec[i] = float(i) * -1.25f + 1e-7f;
    std::vector<std::byte> buf(upsert_record_bytes(dim, count));
    ASSERT_EQ(buf.size(), kUpsertFixed + count * (8 + 4 * dim));
    ASSERT_TRUE(encode_upsert(buf, "a", dim, count, 0xfeedull, ids, vec));
    auto d = decode_record(uint16_t(RecordType::Upsert), buf);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "a");
    EXPECT_EQ(d->upsert.dim, dim);
    EXPECT_EQ(d->upsert.count, count);
    EXPECT_EQ(d->upsert.provenance, 0xfeedull);
    EXPECT_EQ((d->upsert.ids - buf.data()) % 8, 0); // aligned for the store's u64 reads
    EXPECT_EQ(std::memcmp(d->upsert.ids, ids, sizeof ids), 0);
    EXPECT_EQ(std::memcmp(d->upsert.vectors, vec, sizeof vec), 0);
}

TEST(StorageRecords, DropAndDeleteRoundTrip) {
    std::vector<std::byte> buf(delete_record_bytes(3));
    const uint64_t ids[4] = { 42, 7, 1ull << 60, 9 };
    const bool missing[4] = { false, true, false, false }; // only what the call really deleted
    auto n = encode_delete(buf, std::string(64, 'x'), ids, 4, missing);
    ASSERT_TRUE(n);
    EXPECT_EQ(*n, buf.size());
    auto d = decode_record(uint16_t(RecordType::Delete), buf);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name.size(), 64u);
    ASSERT_EQ(d->delete_count, 3u);
    uint64_t got[3];
    std::memcpy(got, d->delete_ids, sizeof got);
    EXPECT_EQ(got[0], 42u);
    EXPECT_EQ(got[1], 1ull << 60);
    EXPECT_EQ(got[2], 9u);
    const bool all_missing[1] = { true };
    EXPECT_FALSE(encode_delete(buf, "a", ids, 1, all_missing)); // nothing deleted: no record
    std::vector<std::byte> drop(kDropRecordBytes);
    ASSERT_TRUE(encode_drop(drop, "gone"));
    auto g = decode_record(uint16_t(RecordType::Drop), drop);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->type, RecordType::Drop);
    EXPECT_EQ(g->name, "gone");
}

TEST(StorageRecords, EncodingRefusesBadNamesAndSmallBuffers) {
    std::vector<std::byte> buf(4096);
    EXPECT_FALSE(encode_drop(buf, ""));
    EXPECT_FALSE(encode_drop(buf, std::string(65, 'x')));
    uint64_t id = 1;
    EXPECT_FALSE(encode_delete(std::span<std::byte>(buf.data(), delete_record_bytes(1) - 1), "a", &id, 1));
    float v[4] = {};
    EXPECT_FALSE(encode_upsert(std::span<std::byte>(buf.data(), upsert_record_bytes(4, 1) - 1), "a", 4, 1, 0, &id, v));
    EXPECT_FALSE(encode_upsert(buf, "a", 0, 1, 0, &id, v));
    EXPECT_FALSE(encode_upsert(buf, "a", 4, 0, 0, &id, v));
    EXPECT_EQ(upsert_record_bytes(kRecordMaxDim + 1, 1), 0u);
}

TEST(StorageRecords, DecodingRefusesWhatDoesNotAddUp) {
    std::vector<std::byte> buf(4096);
    uint64_t ids[2] = { 1, 2 };
    float v[8] = {};
    const size_t n = *encode_upsert(buf, "c", 4, 2, 0, ids, v);
    const std::span<const std::byte> rec(buf.data(), n);
    EXPECT_TRUE(decode_record(3, rec));
    EXPECT_FALSE(decode_record(3, rec.first(n - 4))); // a vector cut short
    EXPECT_FALSE(decode_record(0, rec));              // unknown types
    EXPECT_FALSE(decode_record(13, rec));
    // Raft records pass through whole (lib/raft/log_records decodes them), but never empty.
    auto raft = decode_record(7, rec);
    ASSERT_TRUE(raft);
    EXPECT_EQ(raft->type, storage::RecordType::RaftAppend);
    EXPECT_EQ(raft->raft.size(), n);
    auto snapshot = decode_record(9, rec);
    ASSERT_TRUE(snapshot);
    EXPECT_EQ(snapshot->type, storage::RecordType::RaftSnapshot);
    EXPECT_EQ(storage::raft_record_kind(snapshot->type), uint8_t(4)); // lib/raft/log_records' Snapshot
    EXPECT_FALSE(decode_record(6, {}));
    EXPECT_FALSE(decode_record(9, {}));
    auto forget = decode_record(10, rec);
    ASSERT_TRUE(forget);
    EXPECT_EQ(storage::raft_record_kind(forget->type), uint8_t(5)); // lib/raft/log_records' Forget
    EXPECT_FALSE(decode_record(5, {}));                             // an empty audit record
    EXPECT_FALSE(decode_record(5, std::vector<std::byte>(kMaxAuditRecord + 1)));
    auto audit = decode_record(5, rec); // an audit record is carried as it is
    ASSERT_TRUE(audit);
    EXPECT_EQ(audit->audit.size(), n);
    EXPECT_FALSE(decode_record(4, rec)); // not a delete's size
    EXPECT_FALSE(decode_record(3, rec.first(kRecordPrefix - 1)));
    std::vector<std::byte> bad(buf.begin(), buf.begin() + n);
    bad[kRecordPrefix + 4] = std::byte(3); // count 3 with room for 2
    EXPECT_FALSE(decode_record(3, bad));
    bad = std::vector<std::byte>(buf.begin(), buf.begin() + n);
    bad[0] = std::byte(0); // no name
    EXPECT_FALSE(decode_record(3, bad));
    bad[0] = std::byte(65); // longer than any name
    EXPECT_FALSE(decode_record(3, bad));
    bad[0] = std::byte(1);
    bad[40] = std::byte('z'); // bytes after the name must be zero
    EXPECT_FALSE(decode_record(3, bad));
}

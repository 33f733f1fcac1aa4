#pragma once
// What the vector store writes to the log: one record per acknowledged change. Every record
// names its collection (names are unique in the store at any moment, and the log keeps the order
// of creates and drops), so replay needs nothing but the records themselves.
//
// Common prefix (72 bytes): u8 name length (1..64), the name zero-padded to 64 bytes, 7 zero bytes.
//   Create (type 1): u32 dim, metric, m, ef_construction, max_elements, max_ef, flags  (100 bytes)
//   Drop   (type 2): nothing more                                                      (72 bytes)
//   Upsert (type 3): u32 dim, u32 count, u64 provenance node, u64 ids[count],
//                    f32 vectors[count * dim] row-major (ids start 8-aligned)
//   Delete (type 4): u32 count, u32 0, u64 ids[count] (one call's deletes, all or none)
//   Audit  (type 5): one record of the MCP audit trail, as the trail wrote it (no prefix, no name)
//   RaftTerm, RaftAppend, RaftTruncate, RaftSnapshot, RaftForget (types 6..10): a Raft member's durable state, as
//                    lib/raft/log_records.h encodes it (no prefix; decoded there, not here)
//   DocUpsert (11):  a document collection's change: lib/text/doc_batch.h's batch (the documents stored)
//   DocDelete (12):  its id list (the ids deleted); both checked there, when replayed, not here
// Little-endian throughout. Decoding distrusts the bytes even though the log's CRCs passed: a
// record from a newer build or a bug must be refused, not followed out of bounds.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace storage {

enum class RecordType : uint16_t {
    Create = 1,
    Drop = 2,
    Upsert = 3,
    Delete = 4,
    Audit = 5,
    RaftTerm = 6,
    RaftAppend = 7,
    RaftTruncate = 8,
    RaftSnapshot = 9,
    RaftForget = 10,
    DocUpsert = 11,
    DocDelete = 12,
};
constexpr bool is_raft_record(RecordType t) { return t >= RecordType::RaftTerm && t <= RecordType::RaftForget; }
// lib/raft/log_records' kinds 1..5 (term, append, truncate, snapshot, forget) are record types 6..10.
constexpr RecordType raft_record_type(uint8_t kind) {
    return static_cast<RecordType>(uint16_t(RecordType::RaftTerm) + kind - 1);
}
constexpr uint8_t raft_record_kind(RecordType t) { return uint8_t(uint16_t(t) - uint16_t(RecordType::RaftTerm) + 1); }
constexpr bool is_raft_record(uint16_t t) {
    return t >= uint16_t(RecordType::RaftTerm) && t <= uint16_t(RecordType::RaftForget);
}

// An audit record (the MCP audit trail's fixed-size record, carried as it is: no name prefix).
constexpr size_t kMaxAuditRecord = 1024;

constexpr size_t kMaxRaftRecord = 256 * 1024;
constexpr size_t kMaxDocumentRecord = 256 * 1024;

constexpr size_t kRecordNameMax = 64;
constexpr size_t kRecordPrefix = 72;
constexpr size_t kCreateRecordBytes = kRecordPrefix + 28;
constexpr size_t kDropRecordBytes = kRecordPrefix;
constexpr size_t kDeleteFixed = kRecordPrefix + 8;
constexpr uint32_t kMaxDeleteIds = 4096;
constexpr size_t kUpsertFixed = kRecordPrefix + 16;
constexpr uint32_t kRecordMaxDim = 4096;

struct CreateRecord {
    uint32_t dim, metric, m, ef_construction, max_elements, max_ef, flags;
};

struct UpsertRecord {
    uint32_t dim;
    uint32_t count;
    uint64_t provenance;
    const std::byte* ids;     // count little-endian u64, 8-aligned when the record is
    const std::byte* vectors; // count * dim little-endian f32
};

struct DecodedRecord {
    RecordType type;
    std::string_view name;
    CreateRecord create;   // Create
    UpsertRecord upsert;   // Upsert
    uint32_t delete_count; // Delete
    const std::byte* delete_ids;
    std::span<const std::byte> audit; // Audit
    std::span<const std::byte> raft;  // RaftTerm .. RaftForget: the payload
    std::span<const std::byte> body;  // DocUpsert, DocDelete: what follows the prefix
};

// Bytes a document record with a body of `body` bytes takes (0: more than one record may hold).
size_t document_record_bytes(size_t body);
// A document record: the prefix, then `head` and `body` back to back (the change's bytes as the
// system call had them; head: a batch's header written afresh when a part of it is logged). The
// body may already be in place in `out` (written there after the prefix's bytes).
ktl::Result<size_t> encode_document(std::span<std::byte> out, std::string_view name, std::span<const std::byte> head,
                                    std::span<const std::byte> body);

// Bytes an upsert of `count` vectors of `dim` floats takes (0: too large to express).
size_t upsert_record_bytes(uint32_t dim, uint64_t count);
// Bytes a delete of `count` ids takes (0: none, or more than kMaxDeleteIds).
size_t delete_record_bytes(uint64_t count);

// Each writes one record into `out` (at least its size) and returns the bytes written;
// InvalidArgs for a name or size out of bounds, OutOfRange when `out` is too small.
ktl::Result<size_t> encode_create(std::span<std::byte> out, std::string_view name, const CreateRecord& r);
ktl::Result<size_t> encode_drop(std::span<std::byte> out, std::string_view name);
// The ids of `ids` whose `skip` entry is false (skip may be null): those a call really deleted.
ktl::Result<size_t> encode_delete(std::span<std::byte> out, std::string_view name, const uint64_t* ids, uint32_t count,
                                  const bool* skip = nullptr);
// ids and vectors are the caller's native arrays (the kernel and the host are little-endian).
ktl::Result<size_t> encode_upsert(std::span<std::byte> out, std::string_view name, uint32_t dim, uint32_t count,
                                  uint64_t provenance, const uint64_t* ids, const float* vectors);

// Corrupt for anything malformed (unknown type, bad name, sizes that do not add up).
ktl::Result<DecodedRecord> decode_record(uint16_t type, std::span<const std::byte> payload);

} // namespace storage

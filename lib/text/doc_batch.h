#pragma once
// Documents as bytes (issue 37; docs/documents.md). One packed form serves the whole path of a
// change: a tool packs a document_upsert call's documents, the doc_upsert system call reads them
// (distrusting every length), the store logs the same bytes as its record's body, and recovery
// hands the record's body back to doc_upsert. Ids to delete travel the same way. A collection's
// snapshot (checkpoints, collection_export) is the batch form with each document's tag.
//
//   batch     u32 count, u32 0, u64 provenance, then per document:
//             u16 id length, u16 metadata length, u32 text length, the id, text and metadata bytes
//   id list   u32 count, u32 0, then per id: u8 length, the id's bytes
//   snapshot  u32 magic "BDOC", u32 version 2, u32 count, u32 max_docs, u64 text_bytes,
//             u32 max_terms, u32 max_postings, u32 term_bytes, u32 the model's checksum (0: none),
//             u64 the embeddings' bytes, then per document: u16 id length, u16 metadata length,
//             u32 text length, u64 tag, u32 slot, u32 0, the bytes; then the embeddings' HNSW
//             index as lib/hnsw saves one (its ids are the slots), kept so that a boot with the
//             same model need not embed every document again
// Little-endian; no padding between documents. Lengths within doc_table.h's bounds (an id
// 1..128 bytes, a text up to 64 KiB, metadata up to 4 KiB).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

#include "doc_table.h"
#include "document_index.h"

namespace text {

constexpr size_t kBatchHeader = 16;
constexpr size_t kDocHeader = 8;
constexpr size_t kIdListHeader = 8;
constexpr size_t kSnapshotHeader = 48;
constexpr size_t kSnapshotDocHeader = 24;
constexpr uint32_t kSnapshotMagic = 0x434F4442; // "BDOC"
constexpr uint32_t kSnapshotVersion = 2;
constexpr uint32_t kMaxBatchDocs = 1024;
constexpr uint32_t kMaxBatchIds = 1024;

// Bytes one document takes in a batch.
constexpr size_t batch_doc_bytes(size_t id, size_t text, size_t metadata) { return kDocHeader + id + text + metadata; }

// Packs documents into `out`: add() each, then finish() writes the header and answers the bytes.
class BatchWriter {
public:
    explicit BatchWriter(std::span<std::byte> out) : m_out(out), m_at(kBatchHeader) {}
    // False (nothing added) when the document breaks a bound or does not fit.
    bool add(std::string_view id, std::string_view text, std::string_view metadata);
    size_t finish(uint64_t provenance);
    uint32_t count() const { return m_count; }
    size_t bytes() const { return m_at; }

private:
    std::span<std::byte> m_out;
    size_t m_at;
    uint32_t m_count = 0;
};

struct BatchDoc {
    std::string_view id, text, metadata;
    uint64_t tag;  // a snapshot's (a batch's documents: its provenance)
    uint32_t slot; // a snapshot's
};

// A checked batch: every length inside the bytes, the documents filling them exactly. The bytes
// must not change after parse() (the kernel parses its own copy of a caller's).
class Batch {
public:
    // Corrupt: anything that does not add up (a count of 0 or over kMaxBatchDocs included).
    static ktl::Result<Batch> parse(std::span<const std::byte> bytes);
    uint32_t count() const { return m_count; }
    uint64_t provenance() const { return m_provenance; }
    // The documents in order: next() fills `d` and answers true until they are all read.
    bool next(BatchDoc& d);
    // The bytes of the first `n` documents as a batch of its own (its header aside): a change
    // stored in part is logged in part.
    size_t prefix_bytes(uint32_t n) const;

private:
    std::span<const std::byte> m_bytes;
    size_t m_at = kBatchHeader;
    uint32_t m_count = 0;
    uint64_t m_provenance = 0;
};

// Writes a batch's header into out[0, kBatchHeader) (a part of a batch logged as one of its own).
void write_batch_header(std::span<std::byte> out, uint32_t count, uint64_t provenance);

class IdListWriter {
public:
    explicit IdListWriter(std::span<std::byte> out) : m_out(out), m_at(kIdListHeader) {}
    bool add(std::string_view id);
    size_t finish();
    uint32_t count() const { return m_count; }

private:
    std::span<std::byte> m_out;
    size_t m_at;
    uint32_t m_count = 0;
};

class IdList {
public:
    static ktl::Result<IdList> parse(std::span<const std::byte> bytes);
    uint32_t count() const { return m_count; }
    bool next(std::string_view& id);

private:
    std::span<const std::byte> m_bytes;
    size_t m_at = kIdListHeader;
    uint32_t m_count = 0;
};

// A snapshot of `index`: its size, and any range of its bytes (a paged export: each page costs
// a walk of the documents up to it, nothing is kept between pages).
uint64_t snapshot_size(const DocumentIndex& index);
size_t save_range(const DocumentIndex& index, uint64_t offset, std::span<std::byte> out);

// A checked snapshot: its parameters (capacity raised to `capacity` when larger) and documents.
class Snapshot {
public:
    static ktl::Result<Snapshot> parse(std::span<const std::byte> bytes, uint32_t capacity);
    const DocumentIndexParams& params() const { return m_params; }
    uint32_t count() const { return m_count; }
    bool next(BatchDoc& d);
    // The embeddings' index (empty: none kept) and the model that made them.
    std::span<const std::byte> vectors() const { return m_vectors; }
    uint32_t model_checksum() const { return m_model; }

private:
    std::span<const std::byte> m_bytes; // (the documents' part)
    std::span<const std::byte> m_vectors;
    size_t m_at = kSnapshotHeader;
    uint32_t m_count = 0, m_model = 0;
    DocumentIndexParams m_params {};
};

// A snapshot back into an empty index made with its params(): each document into its slot, then
// the embeddings (kept ones for the same model, else made again). Corrupt: a slot or id twice.
ktl::Result<void> restore(DocumentIndex& index, Snapshot& snapshot);

// Whether these bytes claim to be a documents snapshot (the magic only: parse() checks the rest).
bool is_snapshot(std::span<const std::byte> bytes);

// A document collection's indexes sized for `max_docs` documents of about `text_bytes_each`
// bytes (ids and metadata included, 64 .. 69,760): what collection_create gives one.
constexpr uint32_t kDefaultTextBytesEach = 1536;
DocumentIndexParams params_for(uint32_t max_docs, uint32_t text_bytes_each = kDefaultTextBytesEach);

} // namespace text

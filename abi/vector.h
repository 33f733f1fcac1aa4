#pragma once
// Records and limits of the vector calls (vec_*, store_*).
#include <cstdint>
#include <string_view>

#include <hnsw/params.h>

namespace vector {
struct Job; // what vec_serve hands a worker: kernel/vector/service.h (the workers are kernel code)
}

namespace abi {

using Hit = hnsw::Hit; // vec_search's result rows (lib/hnsw/params.h)
using VectorJob = vector::Job;

// Layout shared with callers of vec_create.
struct CreateParams {
    uint32_t dim;
    uint32_t metric;          // 0 L2, 1 cosine, 2 inner product
    uint32_t m;               // 0 = default (16)
    uint32_t ef_construction; // 0 = default (200)
    uint32_t max_elements;
    uint32_t max_ef; // 0 = default (512)
    uint32_t flags;  // kCreateMemoryOnly
};

// Layout returned by vec_stats.
struct VectorStats {
    uint64_t count;
    uint64_t deleted;
    uint64_t levels;
    uint64_t bytes_used;
    uint64_t bytes_budget;
    uint64_t distance_computations;
    uint32_t dim;
    uint32_t metric;
    uint64_t writes;     // upsert and delete requests served: a paged export checks it did not move
    uint64_t serial;     // which collection this is: every one created or loaded this boot gets its own
    uint32_t replicated; // kStatsReplicated, kStatsElsewhere, or 0
    uint32_t unlinked;   // of count: stored by recovery, found by exhaustive scan, linked in the background
    // Background link slices that changed the collection's snapshot (its graph), not its contents:
    // a paged export checks that neither this nor `writes` moved.
    uint64_t link_slices;
    // A document collection (kCreateDocuments): kind 1, count its documents, dim the embedder's
    // (0: no model, lexical search only); the text's bytes, the lexical index's terms.
    uint32_t kind; // 0 vectors, 1 documents
    uint32_t max_documents;
    uint64_t text_bytes;
    uint64_t text_budget;
    uint32_t terms;
    uint32_t max_terms;
    uint32_t postings; // (document, word) pairs the lexical index holds
    uint32_t max_postings;
};

// VectorStats::replicated: one of the consensus group's replicated collections (reads may need
// vec_sync); or a stand-in for one other nodes hold (kernel/vector/stand_in.h): changes go to its
// voters, reads are refused (-Elsewhere), and only `dim` is filled in.
constexpr uint32_t kStatsReplicated = 1;
constexpr uint32_t kStatsElsewhere = 2;

// doc_search's query: `length` bytes of text at `text`; k 1..100; mode 0 hybrid, 1 lexical,
// 2 semantic (docs/documents.md).
struct DocQuery {
    uint64_t text;
    uint64_t length;
    uint32_t k;
    uint32_t mode;
};
constexpr uint32_t kDocMaxK = 100;
constexpr uint32_t kDocMaxId = 128;
constexpr uint64_t kDocMaxText = 65536;
constexpr uint64_t kDocMaxMetadata = 4096;
// One of doc_search's results, best first.
struct DocHit {
    float score;
    uint16_t id_length;
    uint16_t reserved;
    char id[kDocMaxId];
};
// doc_get's buffers (capacities at least kDocMaxText and kDocMaxMetadata) and what it writes back.
struct DocRead {
    uint64_t text;
    uint64_t text_capacity;
    uint64_t metadata;
    uint64_t metadata_capacity;
    uint64_t text_length;     // written
    uint64_t metadata_length; // written (0: none)
    uint64_t provenance;      // written: the node of the request that stored it
};

// Optional id filter of vec_search (a5): only these ids may be returned; ascending, unique.
struct SearchFilter {
    uint64_t ids;   // pointer to uint64_t[count]
    uint64_t count; // <= kMaxFilterIds
};
constexpr uint64_t kMaxFilterIds = 4096;
constexpr uint64_t kMaxDeleteIds = 4096; // ids one vec_delete takes together

// CreateParams::flags
constexpr uint32_t kCreateMemoryOnly = 1; // durability "memory": never logged, gone at restart
// One of the cluster's replicated collections (docs/replication.md): created, changed and dropped
// only through the consensus group, which applies each change on every voter.
constexpr uint32_t kCreateReplicated = 2;
// With kCreateReplicated: the replicas asked for (3 or 5), which must be the group's voters.
constexpr uint32_t kCreateReplicasShift = 8;
constexpr uint32_t kCreateReplicasMask = 0xfu << kCreateReplicasShift;
// A document collection (docs/documents.md): max_elements documents of about `m` bytes of text
// each (0: 1,536; 64 .. 65,536), their texts indexed for BM25 and, with the embedder's model,
// embedded (its dimension); dim, metric and ef are not used. Its memory budget is
// kMaxDocumentCollectionBytes. Changed with doc_upsert and doc_delete, read with doc_search and
// doc_get (vec_* refuse it).
constexpr uint32_t kCreateDocuments = 4;

constexpr uint32_t kMaxNamed = 32;                             // collections in the store at once
constexpr uint32_t kMaxNameLength = 64;                        // bytes; names are [A-Za-z0-9_.-], never "." or ".."
constexpr uint64_t kMaxCollectionBytes = 64ull << 20;          // one collection's memory budget at most
constexpr uint64_t kMaxDocumentCollectionBytes = 512ull << 20; // a document collection's (its texts too)

// A name the store accepts: 1..64 bytes of letters, digits, '_', '-', '.', not made of dots only
// (so never "." or ".."), no "..", no '/' or '\\'. Callers check before asking; the store re-checks.
constexpr bool valid_collection_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxNameLength)
        return false;
    bool only_dots = true;
    for (char c : name) {
        const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                             c == '-' || c == '.';
        if (!allowed)
            return false;
        only_dots = only_dots && c == '.';
    }
    return !only_dots && name.find("..") == std::string_view::npos;
}

// One row of store_list (layout shared with callers).
// store_stage's argument block: one chunk of a snapshot being imported in pieces.
struct StageChunk {
    uint64_t total;  // the whole snapshot's size (at offset 0: starts, or restarts, the import)
    uint64_t offset; // must be the bytes staged so far
    uint64_t data;   // the chunk
    uint64_t len;
    uint32_t action;       // 0 stage the chunk, 1 commit (all staged: load and keep), 2 abandon
    uint32_t crc_out;      // written back: CRC-32 of everything staged so far
    uint64_t received_out; // written back: bytes staged so far
    uint64_t capacity;     // commit: the collection's capacity (0: what the snapshot holds plus room to grow)
    uint64_t provenance;   // commit: the node every imported vector is stamped with (the import's own)
    uint32_t flags;        // commit: kCreateReplicated for a replicated collection put back from a checkpoint
    uint32_t reserved;
};

struct StoreEntry {
    char name[kMaxNameLength + 1];
    uint8_t metric;
    uint8_t durable;    // logged to the disk (1) or in memory only (0)
    uint8_t replicated; // one of the cluster's replicated collections (kCreateReplicated)
    uint8_t documents;  // a document collection (kCreateDocuments): count and max_elements are documents
    uint32_t dim;
    uint32_t m;
    uint32_t ef_construction;
    uint32_t max_elements;
    uint32_t count; // live vectors when listed (a snapshot: writers may be running)
    uint64_t bytes_budget;
};

} // namespace abi

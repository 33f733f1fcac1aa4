#pragma once
// A document collection's indexes together (issue 37; docs/documents.md): the documents' table
// (ids, texts, metadata), the lexical index (BM25) and, with an embedder's model, an HNSW index of
// the texts' embeddings (cosine). A change reaches all three or none; a search runs in one mode:
//   lexical   BM25 over the texts (score: BM25)
//   semantic  the query's embedding against the texts' (score: cosine similarity)
//   hybrid    both, fused by reciprocal rank (Cormack, Clarke & Büttcher, SIGIR 2009): each
//             document scores the sum over the two lists of 1 / (60 + its rank there), from the
//             first 3k of each (at least 30); a document in one list only still counts. The
//             lexical list leaves out terms in more than half the documents (a question's "the",
//             "what", "user": BM25's classic idf holds them no evidence; ranked, they would out-vote
//             the meaning in a small collection).
// Memory: one caller-provided span carved once (the three indexes and a scratch for undoing a
// change that did not fit). Portable: the kernel's store serves it, the host tests it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <hnsw/index.h>
#include <ktl/result.h>

#include "doc_table.h"
#include "embed_model.h"
#include "lexical_index.h"

namespace text {

enum class SearchMode : uint8_t { Hybrid, Lexical, Semantic };

struct DocumentIndexParams {
    uint32_t max_docs = 0;     // 1 .. 2^20
    uint64_t text_bytes = 0;   // the documents' ids, texts and metadata together
    uint32_t max_terms = 0;    // the lexical index's dictionary
    uint32_t max_postings = 0; // and postings
    uint32_t term_bytes = 0;
    bool validate() const;
};

struct DocHit {
    uint32_t slot;
    float score;
};

class DocumentIndex {
public:
    static constexpr uint32_t kRrfK = 60;
    static constexpr uint32_t kMaxK = 100;

    DocumentIndex() = default;
    DocumentIndex(DocumentIndex&&) = default;
    DocumentIndex& operator=(DocumentIndex&&) = default;

    // `model` may be null (no embedder: lexical search only); it must outlive the index.
    static size_t memory_needed(const DocumentIndexParams& p, const EmbedModel* model);
    static ktl::Result<DocumentIndex> create(const DocumentIndexParams& p, const EmbedModel* model,
                                             std::span<std::byte> memory);

    // Stores or replaces document `id` and indexes it: its slot; the document remembers `tag` (the
    // request that stored it). InvalidArgs (DocTable's bounds), Full or NoMemory (one of the
    // indexes has no room: nothing changed, a replaced document is as it was, tag included).
    ktl::Result<uint32_t> upsert(std::string_view id, std::string_view text, std::string_view metadata, bool& replaced,
                                 uint64_t tag = 0);
    // Removes document `id` from all three: its former slot, or NotFound.
    ktl::Result<uint32_t> remove(std::string_view id);
    // The best documents for `query` in `mode`, best first, at most min(out.size(), kMaxK): their
    // number. Unsupported: a semantic or hybrid search without a model.
    ktl::Result<size_t> search(std::string_view query, SearchMode mode, std::span<DocHit> out);

    const DocTable& documents() const { return m_docs; }
    DocumentIndexParams params() const;
    // Every document remembers `tag` from now on (an import's own request).
    void retag(uint64_t tag);

    // Putting a snapshot back (doc_batch.h): each document into the slot it had, words indexed,
    // not embedded; then the embeddings' index as the snapshot kept it (for the same model:
    // model_checksum()), or, without one, every document embedded again.
    ktl::Result<void> restore(uint32_t slot, std::string_view id, std::string_view text, std::string_view metadata,
                              uint64_t tag);
    ktl::Result<void> restore_vectors(std::span<const std::byte> snapshot);
    ktl::Result<void> embed_all();
    const hnsw::Index& vectors() const { return m_vectors; }
    uint32_t model_checksum() const { return m_model ? m_model->checksum() : 0; }
    const LexicalIndex& lexical() const { return m_lexical; }
    bool semantic() const { return m_model != nullptr; }

private:
    ktl::Result<void> index(uint32_t slot, std::string_view text);
    void unindex(uint32_t slot, std::string_view text);
    size_t lexical_hits(std::string_view query, std::span<DocHit> out, bool discriminating_only = false);
    size_t semantic_hits(std::string_view query, std::span<DocHit> out);

    DocTable m_docs;
    LexicalIndex m_lexical;
    hnsw::Index m_vectors;
    std::span<std::byte> m_vectors_memory; // (its part of the span: restore_vectors loads there)
    uint32_t m_vectors_capacity = 0;
    const EmbedModel* m_model = nullptr;
    char* m_old_text = nullptr; // (kMaxDocText) a replaced document's, to put back if need be
    char* m_old_meta = nullptr; // (kMaxDocMetadata)
    float* m_vector = nullptr;  // (dim) an embedding being made
    DocHit* m_lists = nullptr;  // (3 x 3 x kMaxK) a hybrid search's lists: lexical and fused, semantic
    LexicalHit* m_lexical_out = nullptr;
    hnsw::Hit* m_hnsw_out = nullptr;
};

} // namespace text

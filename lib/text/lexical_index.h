#pragma once
// The lexical index of a document collection (issue 37; docs/documents.md): an inverted index
// scored by Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
// Beyond", 2009):
//   score(D, Q) = sum over distinct terms t of Q in D of
//                 idf(t) * tf(t, D) * (k1 + 1) / (tf(t, D) + k1 * (1 - b + b * |D| / avgdl))
//   idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))          (never negative)
// with N the documents indexed, df(t) those containing t, |D| a document's tokens and avgdl
// their mean; tokens are tokenizer.h's. Documents are numbered by the caller (slots: the
// collection maps its string ids to them).
//
// Memory: everything lives in one caller-provided span, carved once by create(): the documents'
// table, the term dictionary (open addressing, FNV-1a) and its text, postings in blocks of seven
// (slot, tf) pairs chained per term (freed blocks are reused), and the search's accumulators.
// Nothing allocates afterwards. Calls must be serialised by the caller (one scratch inside).
// A term stays in the dictionary once seen, with no documents after its last one is removed:
// the dictionary is sized for the distinct terms a collection meets, not only those it holds.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace text {

struct LexicalParams {
    uint32_t max_docs = 0;     // document slots 0 .. max_docs - 1
    uint32_t max_terms = 0;    // distinct terms the dictionary holds
    uint32_t max_postings = 0; // (document, term) pairs held at once
    uint32_t term_bytes = 0;   // the terms' text, all together
    float k1 = 1.2f;           // term-frequency saturation (0 .. 10)
    float b = 0.75f;           // length normalisation (0 .. 1)
    // InvalidArgs unless every bound is 1 .. 2^24 (term_bytes 1 .. 2^28) and k1, b in range.
    bool validate() const;
};

struct LexicalHit {
    uint32_t slot;
    float score;
};

class LexicalIndex {
public:
    static constexpr uint32_t kNone = 0xffffffffu;

    LexicalIndex() = default; // empty; usable only as a move target
    LexicalIndex(LexicalIndex&&) = default;
    LexicalIndex& operator=(LexicalIndex&&) = default;
    LexicalIndex(const LexicalIndex&) = delete;
    LexicalIndex& operator=(const LexicalIndex&) = delete;

    // Bytes create() carves from its span for `p` (0 when p does not validate).
    static size_t memory_needed(const LexicalParams& p);
    // InvalidArgs (params), NoMemory (the span is smaller than memory_needed).
    static ktl::Result<LexicalIndex> create(const LexicalParams& p, std::span<std::byte> memory);

    // Indexes `text` as document `slot`. InvalidArgs: slot out of range or in use; Full: the
    // dictionary, its text or the postings have no room (the index is as it was, but for terms
    // seen in the text now in the dictionary with no documents).
    ktl::Result<void> add(uint32_t slot, std::string_view text);
    // Removes document `slot`, whose text is `text` (the one add() was given: checked by a hash
    // of it, InvalidArgs when it differs). NotFound: no such document.
    ktl::Result<void> remove(uint32_t slot, std::string_view text);
    // The best documents for `query`, best first (equal scores: lower slot first), at most
    // out.size(): their number. Documents sharing no term with the query are not returned.
    // discriminating_only: terms in more than half the documents (of three or more) are left out (Robertson and Sparck
    // Jones's idf is negative there: they are evidence against, not for; hybrid search uses it so a
    // question's "the" and "user" do not rank documents).
    size_t search(std::string_view query, std::span<LexicalHit> out, bool discriminating_only = false);

    bool contains(uint32_t slot) const { return slot < m_params.max_docs && m_docs[slot].alive; }
    uint32_t documents() const { return m_doc_count; }
    uint64_t tokens() const { return m_total_tokens; }
    uint32_t terms() const { return m_term_count; }
    uint32_t postings() const { return m_posting_count; }
    // How many documents hold `term` (already a token: lower-case), 0 for an unknown one.
    uint32_t document_frequency(std::string_view term) const;
    const LexicalParams& params() const { return m_params; }

private:
    static constexpr uint32_t kBlockPostings = 7;
    struct Posting {
        uint32_t slot;
        uint32_t tf;
    };
    struct Block {
        uint32_t next;
        uint32_t count;
        Posting p[kBlockPostings];
    };
    struct Term {
        uint32_t hash, text_at;
        uint32_t length; // (<= kMaxTokenBytes)
        uint32_t df;
        uint32_t head;          // its newest block (kNone: none)
        uint32_t mark, pending; // the current add/remove/search's: seen, and how often
    };
    struct Doc {
        uint32_t length; // tokens
        uint32_t text_hash;
        uint32_t alive;
    };

    uint32_t find(std::string_view token, uint32_t hash) const;
    uint32_t intern(std::string_view token); // kNone when full
    uint32_t next_mark();
    void push_posting(Term& t, uint32_t slot, uint32_t tf);
    bool remove_posting(Term& t, uint32_t slot);
    float bm25(float idf, uint32_t tf, uint32_t length, float avgdl) const;

    LexicalParams m_params {};
    Doc* m_docs = nullptr;
    Term* m_terms = nullptr;
    uint32_t* m_table = nullptr; // term numbers by hash (kNone: empty)
    uint32_t m_table_mask = 0;
    char* m_text = nullptr;
    Block* m_blocks = nullptr;
    uint32_t m_block_count = 0;
    uint32_t m_free_block = kNone, m_blocks_made = 0;
    float* m_acc = nullptr;
    uint32_t* m_touched = nullptr;
    uint32_t* m_distinct = nullptr;
    uint32_t m_doc_count = 0, m_term_count = 0, m_posting_count = 0, m_text_used = 0, m_blocks_free = 0;
    uint64_t m_total_tokens = 0;
    uint32_t m_mark = 0;
};

// The natural logarithm (x > 0), freestanding (the kernel links no libm): relative error below
// 1e-12 over doubles' normal range.
double ln(double x);

} // namespace text

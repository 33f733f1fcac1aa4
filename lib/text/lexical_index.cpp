#include "lexical_index.h"

#include "hash.h"
#include "tokenizer.h"

namespace text {
namespace {

constexpr uint32_t kMaxBound = 1u << 24;
constexpr uint32_t kMaxTermBytes = 1u << 28;
constexpr uint32_t kMaxTf = 0xffffu; // a term's count in one document saturates there

using detail::fnv1a;

using detail::table_size;

uint32_t block_total(const LexicalParams& p, uint32_t per_block) {
    return p.max_postings / per_block + p.max_terms + 1;
}

// Offsets of each part within the span, in create()'s order.
struct Layout {
    size_t docs, terms, table, text, blocks, acc, touched, distinct, end;
};

size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

} // namespace

double ln(double x) {
    if (!(x > 0))
        return -1e300;
    // x = m * 2^e with m in [1, 2): ln x = e ln 2 + ln m, and ln m = 2 atanh(z), z = (m-1)/(m+1) <= 1/3.
    int e = 0;
    while (x >= 2.0) {
        x *= 0.5;
        ++e;
    }
    while (x < 1.0) {
        x *= 2.0;
        --e;
    }
    const double z = (x - 1.0) / (x + 1.0), z2 = z * z;
    double term = z, sum = 0;
    for (int k = 1; k <= 41; k += 2) { // z^41 / 41 < 1e-21 at z = 1/3
        sum += term / k;
        term *= z2;
    }
    return e * 0.69314718055994530942 + 2.0 * sum;
}

bool LexicalParams::validate() const {
    return max_docs >= 1 && max_docs <= kMaxBound && max_terms >= 1 && max_terms <= kMaxBound && max_postings >= 1 &&
           max_postings <= kMaxBound && term_bytes >= 1 && term_bytes <= kMaxTermBytes && k1 >= 0.0f && k1 <= 10.0f &&
           b >= 0.0f && b <= 1.0f;
}

namespace {

template <typename Doc, typename Term, typename Block>
Layout layout_of(const LexicalParams& p, uint32_t per_block) {
    Layout l {};
    size_t at = 0;
    l.docs = at;
    at = align_up(at + size_t(p.max_docs) * sizeof(Doc), 8);
    l.terms = at;
    at = align_up(at + size_t(p.max_terms) * sizeof(Term), 8);
    l.table = at;
    at = align_up(at + size_t(table_size(p.max_terms)) * sizeof(uint32_t), 8);
    l.text = at;
    at = align_up(at + p.term_bytes, 8);
    l.blocks = at;
    at = align_up(at + size_t(block_total(p, per_block)) * sizeof(Block), 8);
    l.acc = at;
    at = align_up(at + size_t(p.max_docs) * sizeof(float), 8);
    l.touched = at;
    at = align_up(at + size_t(p.max_docs) * sizeof(uint32_t), 8);
    l.distinct = at;
    at = align_up(at + size_t(p.max_terms) * sizeof(uint32_t), 8);
    l.end = at;
    return l;
}

} // namespace

size_t LexicalIndex::memory_needed(const LexicalParams& p) {
    return p.validate() ? layout_of<Doc, Term, Block>(p, kBlockPostings).end + 8 : 0;
}

ktl::Result<LexicalIndex> LexicalIndex::create(const LexicalParams& p, std::span<std::byte> memory) {
    if (!p.validate())
        return ktl::Error::InvalidArgs;
    if (memory.size() < memory_needed(p))
        return ktl::Error::NoMemory;
    const Layout l = layout_of<Doc, Term, Block>(p, kBlockPostings);
    // (The span's start rounded up to 8: memory_needed() leaves room for it.)
    std::byte* base = memory.data() + (align_up(reinterpret_cast<uintptr_t>(memory.data()), 8) -
                                       reinterpret_cast<uintptr_t>(memory.data()));
    LexicalIndex x;
    x.m_params = p;
    x.m_docs = reinterpret_cast<Doc*>(base + l.docs);
    x.m_terms = reinterpret_cast<Term*>(base + l.terms);
    x.m_table = reinterpret_cast<uint32_t*>(base + l.table);
    x.m_table_mask = table_size(p.max_terms) - 1;
    x.m_text = reinterpret_cast<char*>(base + l.text);
    x.m_blocks = reinterpret_cast<Block*>(base + l.blocks);
    x.m_block_count = block_total(p, kBlockPostings);
    x.m_acc = reinterpret_cast<float*>(base + l.acc);
    x.m_touched = reinterpret_cast<uint32_t*>(base + l.touched);
    x.m_distinct = reinterpret_cast<uint32_t*>(base + l.distinct);
    for (uint32_t i = 0; i < p.max_docs; ++i) {
        x.m_docs[i] = Doc { 0, 0, 0 };
        x.m_acc[i] = 0.0f;
    }
    for (uint32_t i = 0; i <= x.m_table_mask; ++i)
        x.m_table[i] = kNone;
    return x;
}

uint32_t LexicalIndex::find(std::string_view token, uint32_t hash) const {
    for (uint32_t i = hash & m_table_mask, probes = 0; probes <= m_table_mask; i = (i + 1) & m_table_mask, ++probes) {
        const uint32_t t = m_table[i];
        if (t == kNone)
            return kNone;
        const Term& term = m_terms[t];
        if (term.hash == hash && std::string_view(m_text + term.text_at, term.length) == token)
            return t;
    }
    return kNone;
}

uint32_t LexicalIndex::document_frequency(std::string_view term) const {
    const uint32_t t = find(term, fnv1a(term));
    return t == kNone ? 0 : m_terms[t].df;
}

uint32_t LexicalIndex::intern(std::string_view token) {
    const uint32_t hash = fnv1a(token);
    if (const uint32_t t = find(token, hash); t != kNone)
        return t;
    if (m_term_count == m_params.max_terms || token.size() > m_params.term_bytes - m_text_used)
        return kNone;
    const uint32_t t = m_term_count++;
    for (size_t i = 0; i < token.size(); ++i)
        m_text[m_text_used + i] = token[i];
    m_terms[t] = Term { hash, m_text_used, static_cast<uint32_t>(token.size()), 0, kNone, 0, 0 };
    m_text_used += static_cast<uint32_t>(token.size());
    // (The table is twice the terms' bound: an empty place is always found.)
    uint32_t i = hash & m_table_mask;
    while (m_table[i] != kNone)
        i = (i + 1) & m_table_mask;
    m_table[i] = t;
    return t;
}

// A number no term carries yet as its mark (marks are reset on the rare wrap).
uint32_t LexicalIndex::next_mark() {
    if (++m_mark == 0) {
        for (uint32_t t = 0; t < m_term_count; ++t)
            m_terms[t].mark = 0;
        m_mark = 1;
    }
    return m_mark;
}

void LexicalIndex::push_posting(Term& t, uint32_t slot, uint32_t tf) {
    if (t.head == kNone || m_blocks[t.head].count == kBlockPostings) {
        uint32_t b;
        if (m_free_block != kNone) {
            b = m_free_block;
            m_free_block = m_blocks[b].next;
            --m_blocks_free;
        } else {
            b = m_blocks_made++;
        }
        m_blocks[b].next = t.head;
        m_blocks[b].count = 0;
        t.head = b;
    }
    Block& h = m_blocks[t.head];
    h.p[h.count++] = Posting { slot, tf };
    ++t.df;
    ++m_posting_count;
}

// The posting's place is taken by the newest block's last one; an emptied block is freed.
bool LexicalIndex::remove_posting(Term& t, uint32_t slot) {
    for (uint32_t b = t.head; b != kNone; b = m_blocks[b].next) {
        Block& block = m_blocks[b];
        for (uint32_t i = 0; i < block.count; ++i) {
            if (block.p[i].slot != slot)
                continue;
            Block& h = m_blocks[t.head];
            block.p[i] = h.p[h.count - 1];
            if (--h.count == 0) {
                const uint32_t emptied = t.head;
                t.head = h.next;
                m_blocks[emptied].next = m_free_block;
                m_free_block = emptied;
                ++m_blocks_free;
            }
            --t.df;
            --m_posting_count;
            return true;
        }
    }
    return false;
}

ktl::Result<void> LexicalIndex::add(uint32_t slot, std::string_view text) {
    if (slot >= m_params.max_docs || m_docs[slot].alive)
        return ktl::Error::InvalidArgs;
    const uint32_t mark = next_mark();
    uint32_t distinct = 0;
    uint64_t length = 0;
    bool full = false;
    for_each_token(text, [&](std::string_view token) {
        const uint32_t t = intern(token);
        if (t == kNone) {
            full = true;
            return false;
        }
        ++length;
        Term& term = m_terms[t];
        if (term.mark != mark) {
            term.mark = mark;
            term.pending = 1;
            m_distinct[distinct++] = t; // (distinct terms <= the dictionary's bound)
        } else if (term.pending < kMaxTf) {
            ++term.pending;
        }
        return true;
    });
    if (full || length > 0xffffffffu)
        return ktl::Error::Full;
    // Room for every posting, and a block for each term whose newest one is full (or that has none).
    uint32_t blocks_needed = 0;
    for (uint32_t i = 0; i < distinct; ++i) {
        const Term& term = m_terms[m_distinct[i]];
        blocks_needed += term.head == kNone || m_blocks[term.head].count == kBlockPostings ? 1 : 0;
    }
    if (distinct > m_params.max_postings - m_posting_count ||
        blocks_needed > (m_block_count - m_blocks_made) + m_blocks_free)
        return ktl::Error::Full;
    for (uint32_t i = 0; i < distinct; ++i) {
        Term& term = m_terms[m_distinct[i]];
        push_posting(term, slot, term.pending);
    }
    m_docs[slot] = Doc { static_cast<uint32_t>(length), fnv1a(text), 1 };
    ++m_doc_count;
    m_total_tokens += length;
    return {};
}

ktl::Result<void> LexicalIndex::remove(uint32_t slot, std::string_view text) {
    if (slot >= m_params.max_docs || !m_docs[slot].alive)
        return ktl::Error::NotFound;
    if (m_docs[slot].text_hash != fnv1a(text))
        return ktl::Error::InvalidArgs;
    const uint32_t mark = next_mark();
    for_each_token(text, [&](std::string_view token) {
        const uint32_t t = find(token, fnv1a(token));
        if (t != kNone && m_terms[t].mark != mark) {
            m_terms[t].mark = mark;
            (void)remove_posting(m_terms[t], slot);
        }
        return true;
    });
    m_total_tokens -= m_docs[slot].length;
    m_docs[slot] = Doc { 0, 0, 0 };
    --m_doc_count;
    return {};
}

float LexicalIndex::bm25(float idf, uint32_t tf, uint32_t length, float avgdl) const {
    const float k1 = m_params.k1, b = m_params.b;
    const float f = static_cast<float>(tf);
    const float norm = avgdl > 0.0f ? k1 * (1.0f - b + b * static_cast<float>(length) / avgdl) : k1;
    return idf * f * (k1 + 1.0f) / (f + norm);
}

namespace {

// Whether hit a ranks after hit b (lower score, or equal and higher slot).
bool worse(const LexicalHit& a, const LexicalHit& b) {
    return a.score < b.score || (a.score == b.score && a.slot > b.slot);
}

// A min-heap on `worse` over h[0..n): the worst kept hit on top.
void sift_down(LexicalHit* h, size_t n, size_t i) {
    for (;;) {
        size_t w = i;
        const size_t l = 2 * i + 1, r = l + 1;
        if (l < n && worse(h[l], h[w]))
            w = l;
        if (r < n && worse(h[r], h[w]))
            w = r;
        if (w == i)
            return;
        const LexicalHit t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

void sift_up(LexicalHit* h, size_t i) {
    while (i > 0) {
        const size_t parent = (i - 1) / 2;
        if (!worse(h[i], h[parent]))
            return;
        const LexicalHit t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

} // namespace

size_t LexicalIndex::search(std::string_view query, std::span<LexicalHit> out, bool discriminating_only) {
    if (m_doc_count == 0 || out.empty())
        return 0;
    const double n = m_doc_count;
    const float avgdl = static_cast<float>(static_cast<double>(m_total_tokens) / n);
    const uint32_t mark = next_mark();
    uint32_t touched = 0;
    for_each_token(query, [&](std::string_view token) {
        const uint32_t t = find(token, fnv1a(token));
        if (t == kNone || m_terms[t].mark == mark || m_terms[t].df == 0)
            return true;
        if (discriminating_only && n >= 3 && 2.0 * m_terms[t].df > n) // (one or two documents: every word counts)
            return true;
        Term& term = m_terms[t];
        term.mark = mark;
        const double df = term.df;
        const auto idf = static_cast<float>(ln(1.0 + (n - df + 0.5) / (df + 0.5)));
        for (uint32_t b = term.head; b != kNone; b = m_blocks[b].next)
            for (uint32_t i = 0; i < m_blocks[b].count; ++i) {
                const Posting& p = m_blocks[b].p[i];
                const float s = bm25(idf, p.tf, m_docs[p.slot].length, avgdl);
                if (m_acc[p.slot] == 0.0f)
                    m_touched[touched++] = p.slot; // (each slot once: its score only grows from 0)
                m_acc[p.slot] += s;
            }
        return true;
    });
    // The best out.size() of the documents touched, kept in a heap with the worst on top.
    size_t kept = 0;
    for (uint32_t i = 0; i < touched; ++i) {
        const uint32_t slot = m_touched[i];
        const LexicalHit hit { slot, m_acc[slot] };
        m_acc[slot] = 0.0f;
        if (hit.score <= 0.0f)
            continue;
        if (kept < out.size()) {
            out[kept] = hit;
            sift_up(out.data(), kept++);
        } else if (worse(out[0], hit)) {
            out[0] = hit;
            sift_down(out.data(), kept, 0);
        }
    }
    // Best first: the heap emptied from its worst end.
    for (size_t n_left = kept; n_left > 1; --n_left) {
        const LexicalHit t = out[0];
        out[0] = out[n_left - 1];
        out[n_left - 1] = t;
        sift_down(out.data(), n_left - 1, 0);
    }
    return kept;
}

} // namespace text

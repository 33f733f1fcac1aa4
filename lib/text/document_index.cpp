#include "document_index.h"

namespace text {
namespace {

constexpr uint32_t kListMax = 3 * DocumentIndex::kMaxK; // a hybrid search's candidates from each side

size_t align8(size_t v) { return (v + 7) & ~size_t(7); }

hnsw::Params vector_params(const DocumentIndexParams& p, uint32_t dim) {
    hnsw::Params v;
    v.dim = dim;
    v.metric = hnsw::Metric::Cosine;
    v.m = 16;
    v.ef_construction = 100;
    v.max_ef = 512;
    v.max_elements = p.max_docs + p.max_docs / 4 + 16; // (replaced vectors wait for compaction)
    return v;
}

DocParams doc_params(const DocumentIndexParams& p) {
    DocParams d;
    d.max_docs = p.max_docs;
    d.arena_bytes = p.text_bytes;
    return d;
}

LexicalParams lexical_params(const DocumentIndexParams& p) {
    LexicalParams l;
    l.max_docs = p.max_docs;
    l.max_terms = p.max_terms;
    l.max_postings = p.max_postings;
    l.term_bytes = p.term_bytes;
    return l;
}

size_t scratch_bytes(uint32_t dim) {
    return align8(kMaxDocText) + align8(kMaxDocMetadata) + align8(size_t(dim) * sizeof(float)) +
           align8(3 * kListMax * sizeof(DocHit)) + align8(kListMax * sizeof(LexicalHit)) +
           align8(kListMax * sizeof(hnsw::Hit));
}

// Better first: higher score, then lower slot.
bool ahead(const DocHit& a, const DocHit& b) { return a.score > b.score || (a.score == b.score && a.slot < b.slot); }

void sort_hits(DocHit* h, size_t n) { // (insertion sort: a few hundred at most)
    for (size_t i = 1; i < n; ++i) {
        const DocHit x = h[i];
        size_t j = i;
        while (j > 0 && ahead(x, h[j - 1])) {
            h[j] = h[j - 1];
            --j;
        }
        h[j] = x;
    }
}

} // namespace

bool DocumentIndexParams::validate() const {
    return max_docs >= 1 && max_docs <= (1u << 20) && doc_params(*this).validate() && lexical_params(*this).validate();
}

size_t DocumentIndex::memory_needed(const DocumentIndexParams& p, const EmbedModel* model) {
    if (!p.validate())
        return 0;
    const uint32_t dim = model ? model->dim() : 0;
    size_t n = 8 + align8(DocTable::memory_needed(doc_params(p))) +
               align8(LexicalIndex::memory_needed(lexical_params(p))) + scratch_bytes(dim);
    if (model)
        n += align8(hnsw::Index::memory_needed(vector_params(p, dim))) + 8;
    return n;
}

ktl::Result<DocumentIndex> DocumentIndex::create(const DocumentIndexParams& p, const EmbedModel* model,
                                                 std::span<std::byte> memory) {
    if (!p.validate())
        return ktl::Error::InvalidArgs;
    if (memory.size() < memory_needed(p, model))
        return ktl::Error::NoMemory;
    const size_t skip = align8(reinterpret_cast<uintptr_t>(memory.data())) - reinterpret_cast<uintptr_t>(memory.data());
    std::span<std::byte> rest = memory.subspan(skip);
    auto take = [&](size_t bytes) {
        const std::span<std::byte> part = rest.first(bytes);
        rest = rest.subspan(align8(bytes));
        return part;
    };
    DocumentIndex x;
    x.m_model = model;
    const size_t doc_bytes = DocTable::memory_needed(doc_params(p));
    x.m_docs = TRY(DocTable::create(doc_params(p), take(doc_bytes)));
    const size_t lexical_bytes = LexicalIndex::memory_needed(lexical_params(p));
    x.m_lexical = TRY(LexicalIndex::create(lexical_params(p), take(lexical_bytes)));
    const uint32_t dim = model ? model->dim() : 0;
    if (model) {
        const hnsw::Params v = vector_params(p, dim);
        x.m_vectors_memory = take(hnsw::Index::memory_needed(v) + 8);
        x.m_vectors_capacity = v.max_elements;
        x.m_vectors = TRY(hnsw::Index::create(v, x.m_vectors_memory));
    }
    x.m_old_text = reinterpret_cast<char*>(take(kMaxDocText).data());
    x.m_old_meta = reinterpret_cast<char*>(take(kMaxDocMetadata).data());
    x.m_vector = reinterpret_cast<float*>(take(size_t(dim) * sizeof(float) + 8).data());
    x.m_lists = reinterpret_cast<DocHit*>(take(3 * kListMax * sizeof(DocHit)).data());
    x.m_lexical_out = reinterpret_cast<LexicalHit*>(take(kListMax * sizeof(LexicalHit)).data());
    x.m_hnsw_out = reinterpret_cast<hnsw::Hit*>(take(kListMax * sizeof(hnsw::Hit)).data());
    return x;
}

ktl::Result<void> DocumentIndex::index(uint32_t slot, std::string_view text) {
    TRY_VOID(m_lexical.add(slot, text));
    if (!m_model)
        return {};
    const uint32_t dim = m_model->dim();
    // A text with no known word has no embedding: semantic search does not find it.
    if (m_model->embed(text, { m_vector, dim }) == 0)
        return {};
    if (auto r = m_vectors.upsert(slot, { m_vector, dim }); !r) {
        (void)m_lexical.remove(slot, text);
        return r.error();
    }
    return {};
}

void DocumentIndex::unindex(uint32_t slot, std::string_view text) {
    (void)m_lexical.remove(slot, text);
    if (m_model && m_vectors.contains(slot))
        (void)m_vectors.remove(slot);
}

ktl::Result<uint32_t> DocumentIndex::upsert(std::string_view id, std::string_view text, std::string_view metadata,
                                            bool& replaced, uint64_t tag) {
    TRY_VOID(m_docs.check(id, text, metadata));
    const uint32_t existing = m_docs.find(id);
    const uint64_t old_tag = m_docs.tag(existing);
    size_t old_text = 0, old_meta = 0;
    if (existing != DocTable::kNone) { // (kept aside: the table's arena may move it)
        const Doc d = m_docs.get(existing);
        old_text = d.text.size();
        old_meta = d.metadata.size();
        for (size_t i = 0; i < old_text; ++i)
            m_old_text[i] = d.text[i];
        for (size_t i = 0; i < old_meta; ++i)
            m_old_meta[i] = d.metadata[i];
        unindex(existing, { m_old_text, old_text });
    }
    const uint32_t slot = TRY(m_docs.upsert(id, text, metadata, replaced));
    if (auto r = index(slot, text); !r) {
        // Undone: the old document back where it was (the room it had is free again), or none.
        bool again = false;
        if (existing != DocTable::kNone) {
            (void)m_docs.upsert(id, { m_old_text, old_text }, { m_old_meta, old_meta }, again);
            m_docs.set_tag(existing, old_tag);
            (void)index(existing, { m_old_text, old_text });
        } else {
            (void)m_docs.remove(id);
        }
        return r.error();
    }
    m_docs.set_tag(slot, tag);
    return slot;
}

ktl::Result<void> DocumentIndex::restore(uint32_t slot, std::string_view id, std::string_view text,
                                         std::string_view metadata, uint64_t tag) {
    TRY_VOID(m_docs.restore(slot, id, text, metadata));
    if (auto r = m_lexical.add(slot, text); !r) {
        (void)m_docs.remove(id);
        return r.error();
    }
    m_docs.set_tag(slot, tag);
    return {};
}

ktl::Result<void> DocumentIndex::restore_vectors(std::span<const std::byte> snapshot) {
    if (!m_model)
        return ktl::Error::Unsupported;
    const hnsw::Params want = m_vectors.params();
    auto got = TRY(hnsw::Index::load_params(snapshot, m_vectors_capacity));
    if (got.dim != want.dim || got.metric != want.metric || hnsw::Index::memory_needed(got) > m_vectors_memory.size())
        return ktl::Error::Corrupt;
    auto loaded = hnsw::Index::load(snapshot, m_vectors_memory, m_vectors_capacity);
    if (!loaded) { // (the span may hold half a load: an empty index again)
        m_vectors = TRY(hnsw::Index::create(want, m_vectors_memory));
        return loaded.error();
    }
    m_vectors = static_cast<hnsw::Index&&>(*loaded);
    return {};
}

ktl::Result<void> DocumentIndex::embed_all() {
    if (!m_model)
        return {};
    const uint32_t dim = m_model->dim();
    for (uint32_t slot = 0; slot < m_docs.params().max_docs; ++slot) {
        const Doc d = m_docs.get(slot);
        if (d.id.empty() || m_vectors.contains(slot) || m_model->embed(d.text, { m_vector, dim }) == 0)
            continue;
        TRY_VOID(m_vectors.upsert(slot, { m_vector, dim }));
    }
    return {};
}

DocumentIndexParams DocumentIndex::params() const {
    DocumentIndexParams p;
    p.max_docs = m_docs.params().max_docs;
    p.text_bytes = m_docs.params().arena_bytes;
    p.max_terms = m_lexical.params().max_terms;
    p.max_postings = m_lexical.params().max_postings;
    p.term_bytes = m_lexical.params().term_bytes;
    return p;
}

void DocumentIndex::retag(uint64_t tag) {
    for (uint32_t s = 0; s < m_docs.params().max_docs; ++s)
        m_docs.set_tag(s, tag);
}

ktl::Result<uint32_t> DocumentIndex::remove(std::string_view id) {
    const uint32_t slot = m_docs.find(id);
    if (slot == DocTable::kNone)
        return ktl::Error::NotFound;
    unindex(slot, m_docs.get(slot).text);
    return m_docs.remove(id);
}

size_t DocumentIndex::lexical_hits(std::string_view query, std::span<DocHit> out, bool discriminating_only) {
    const size_t n = m_lexical.search(query, { m_lexical_out, out.size() < kListMax ? out.size() : kListMax },
                                      discriminating_only);
    for (size_t i = 0; i < n; ++i)
        out[i] = DocHit { m_lexical_out[i].slot, m_lexical_out[i].score };
    return n;
}

size_t DocumentIndex::semantic_hits(std::string_view query, std::span<DocHit> out) {
    const uint32_t dim = m_model->dim();
    const uint32_t k = static_cast<uint32_t>(out.size() < kListMax ? out.size() : kListMax);
    if (k == 0 || m_vectors.size() == 0 || m_model->embed(query, { m_vector, dim }) == 0)
        return 0;
    auto n = m_vectors.search({ m_vector, dim }, k, k < 64 ? 64 : k, { m_hnsw_out, k });
    if (!n)
        return 0;
    size_t kept = 0;
    for (size_t i = 0; i < *n; ++i) {
        const uint64_t id = m_hnsw_out[i].id;
        const auto slot = static_cast<uint32_t>(id);
        if (id >= m_docs.params().max_docs || m_docs.get(slot).id.empty())
            continue; // (a snapshot's vector with no document: never answered)
        out[kept++] = DocHit { slot, 1.0f - m_hnsw_out[i].distance };
    }
    return kept;
}

ktl::Result<size_t> DocumentIndex::search(std::string_view query, SearchMode mode, std::span<DocHit> out) {
    const size_t k = out.size() < kMaxK ? out.size() : kMaxK;
    if (k == 0)
        return size_t(0);
    if (mode != SearchMode::Lexical && !m_model)
        return ktl::Error::Unsupported;
    if (mode == SearchMode::Lexical)
        return lexical_hits(query, out.first(k));
    if (mode == SearchMode::Semantic)
        return semantic_hits(query, out.first(k));
    // Hybrid: the two ranked lists, then each document's fused score.
    const size_t depth = 3 * k < 30 ? 30 : 3 * k;
    DocHit* lex = m_lists;
    DocHit* sem = m_lists + 2 * kListMax; // (the fused list grows into the lexical one's second half)
    const size_t nl = lexical_hits(query, { lex, depth }, true);
    const size_t ns = semantic_hits(query, { sem, depth });
    // Fused in place of the lexical list (each slot once), the semantic list's others appended.
    size_t n = nl;
    for (size_t i = 0; i < nl; ++i)
        lex[i].score = 1.0f / float(kRrfK + i + 1);
    for (size_t j = 0; j < ns; ++j) {
        const float s = 1.0f / float(kRrfK + j + 1);
        size_t at = 0;
        while (at < n && lex[at].slot != sem[j].slot)
            ++at;
        if (at < n)
            lex[at].score += s;
        else
            lex[n++] = DocHit { sem[j].slot, s }; // (room: the two lists' space together)
    }
    sort_hits(lex, n);
    const size_t m = n < k ? n : k;
    for (size_t i = 0; i < m; ++i)
        out[i] = lex[i];
    return m;
}

} // namespace text

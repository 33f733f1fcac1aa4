#include "documents.h"

#include "../mm/pmm.h"
#include "../syscall/handlers.h"
#include "../syscall/vector_alloc.h"
#include "../text/embedder.h"

#include <text/doc_batch.h>

#include <cstring>

namespace vector::documents {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

std::span<const std::byte> bytes_at(uint64_t ptr, uint64_t len) {
    return { reinterpret_cast<const std::byte*>(ptr), static_cast<size_t>(len) };
}

// a0 the batch, a1 its bytes. Stored in order until one does not fit: the count stored (the
// service logs those), or the first one's error.
int64_t upsert(Collection& c, const Job& job) {
    auto batch = text::Batch::parse(bytes_at(job.a[0], job.a[1]));
    if (!batch)
        return err(ktl::Error::InvalidArgs);
    ++c.writes;
    text::BatchDoc d {};
    int64_t stored = 0;
    while (batch->next(d)) {
        bool replaced = false;
        auto r = c.docs.upsert(d.id, d.text, d.metadata, replaced, d.tag);
        if (!r)
            return stored > 0 ? stored : err(r.error());
        ++stored;
    }
    return stored;
}

// a0 the id list (the kernel's copy), a1 its bytes, a2 the caller's flags for ids that were not
// there, a3 their count, a4 the kernel's own flags (what the log reads).
int64_t remove(Collection& c, const Job& job) {
    auto ids = text::IdList::parse(bytes_at(job.a[0], job.a[1]));
    if (!ids || ids->count() != job.a[3])
        return err(ktl::Error::InvalidArgs);
    ++c.writes;
    auto* missing = reinterpret_cast<bool*>(job.a[4]);
    auto* caller = reinterpret_cast<bool*>(job.a[2]);
    std::string_view id;
    int64_t deleted = 0;
    for (uint32_t i = 0; i < job.a[3] && ids->next(id); ++i) {
        const bool gone = static_cast<bool>(c.docs.remove(id));
        missing[i] = !gone;
        caller[i] = !gone;
        deleted += gone ? 1 : 0;
    }
    return deleted;
}

// a0 the query's text, a1 its bytes, a2 k | mode << 32, a3 the caller's DocHit[k].
int64_t search(Collection& c, const Job& job) {
    const auto k = static_cast<uint32_t>(job.a[2]);
    const auto mode = static_cast<uint32_t>(job.a[2] >> 32);
    if (k == 0 || k > abi::kDocMaxK || mode > 2)
        return err(ktl::Error::InvalidArgs);
    text::DocHit hits[abi::kDocMaxK];
    const std::string_view query(reinterpret_cast<const char*>(job.a[0]), job.a[1]);
    auto n = c.docs.search(query, static_cast<text::SearchMode>(mode), { hits, k });
    if (!n)
        return err(n.error());
    auto* out = reinterpret_cast<abi::DocHit*>(job.a[3]);
    for (size_t i = 0; i < *n; ++i) {
        const text::Doc d = c.docs.documents().get(hits[i].slot);
        abi::DocHit h {};
        h.score = hits[i].score;
        h.id_length = static_cast<uint16_t>(d.id.size());
        std::memcpy(h.id, d.id.data(), d.id.size());
        out[i] = h;
    }
    return static_cast<int64_t>(*n);
}

// a0 the id, a1 its bytes, a2 the caller's DocRead (written only), a3 and a4 its text and
// metadata buffers as doc_get checked them (kDocMaxText and kDocMaxMetadata bytes).
int64_t get(const Collection& c, const Job& job) {
    const std::string_view id(reinterpret_cast<const char*>(job.a[0]), job.a[1]);
    const text::DocTable& t = c.docs.documents();
    const uint32_t slot = t.find(id);
    if (slot == text::DocTable::kNone)
        return err(ktl::Error::NotFound);
    const text::Doc d = t.get(slot);
    if (d.text.size() > abi::kDocMaxText || d.metadata.size() > abi::kDocMaxMetadata)
        return err(ktl::Error::OutOfRange);
    std::memcpy(reinterpret_cast<char*>(job.a[3]), d.text.data(), d.text.size());
    std::memcpy(reinterpret_cast<char*>(job.a[4]), d.metadata.data(), d.metadata.size());
    auto& out = *reinterpret_cast<abi::DocRead*>(job.a[2]);
    out.text_length = d.text.size();
    out.metadata_length = d.metadata.size();
    out.provenance = t.tag(slot);
    return static_cast<int64_t>(d.text.size());
}

// A new collection around pages sized for `p`, its indexes made in them.
ktl::Result<Collection*> make(const text::DocumentIndexParams& p) {
    const text::EmbedModel* model = embedder::model();
    const size_t bytes = text::DocumentIndex::memory_needed(p, model);
    if (bytes == 0) // (bounds past any budget: the count and size were checked by the caller)
        return ktl::Error::NoMemory;
    auto pages = TRY(handlers::alloc_index_pages(bytes, abi::kMaxDocumentCollectionBytes));
    auto index = text::DocumentIndex::create(p, model, pages.span());
    if (!index) {
        pmm::free_pages(pages.addr, pages.order);
        return index.error();
    }
    Collection* c = TRY(handlers::new_collection(pages));
    c->documents = true;
    c->docs = static_cast<text::DocumentIndex&&>(*index);
    return c;
}

} // namespace

int64_t execute(Collection& c, const Job& job) {
    if (!c.documents)
        return err(ktl::Error::WrongType);
    switch (job.op) {
    case Op::DocUpsert: return upsert(c, job);
    case Op::DocDelete: return remove(c, job);
    case Op::DocSearch: return search(c, job);
    case Op::DocGet: return get(c, job);
    default: return err(ktl::Error::Unsupported);
    }
}

int64_t stats(const Collection& c, abi::VectorStats& out) {
    const text::DocTable& t = c.docs.documents();
    const text::DocumentIndexParams p = c.docs.params();
    out = abi::VectorStats {};
    out.count = t.count();
    out.bytes_used = t.bytes_live() + t.bytes_garbage();
    out.bytes_budget = 4096ull << c.order;
    out.dim = c.docs.semantic() ? embedder::dim() : 0;
    out.metric = static_cast<uint32_t>(hnsw::Metric::Cosine);
    out.writes = c.writes;
    out.serial = c.serial;
    out.kind = 1;
    out.max_documents = p.max_docs;
    out.text_bytes = t.bytes_live();
    out.text_budget = p.text_bytes;
    out.terms = c.docs.lexical().terms();
    out.max_terms = p.max_terms;
    out.postings = c.docs.lexical().postings();
    out.max_postings = p.max_postings;
    return 0;
}

int64_t export_range(const Collection& c, const Job& job) {
    if (job.a[0] == 0)
        return static_cast<int64_t>(text::snapshot_size(c.docs));
    return static_cast<int64_t>(
        text::save_range(c.docs, job.a[2], { reinterpret_cast<std::byte*>(job.a[0]), static_cast<size_t>(job.a[1]) }));
}

ktl::Result<Collection*> create(uint32_t max_docs, uint32_t text_bytes_each) {
    return make(text::params_for(max_docs, text_bytes_each ? text_bytes_each : text::kDefaultTextBytesEach));
}

ktl::Result<Collection*> load(std::span<const std::byte> snapshot, uint32_t capacity) {
    auto s = TRY(text::Snapshot::parse(snapshot, capacity));
    Collection* c = TRY(make(s.params()));
    // (The embeddings come back as kept when this boot's model made them: no text embedded again.)
    if (auto r = text::restore(c->docs, s); !r) {
        handlers::destroy_collection(c);
        return r.error();
    }
    return c;
}

} // namespace vector::documents

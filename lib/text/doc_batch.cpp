#include "doc_batch.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace text {
namespace {

using ktl::get16, ktl::get32, ktl::get64, ktl::put16, ktl::put32, ktl::put64;

bool within_bounds(size_t id, size_t text, size_t metadata) {
    return id >= 1 && id <= kMaxDocId && text <= kMaxDocText && metadata <= kMaxDocMetadata;
}

// Walks `count` documents of `header` bytes each (plus their lengths) from `at`: true when they
// fill bytes exactly and each is within bounds.
bool walk(std::span<const std::byte> bytes, size_t at, uint32_t count, size_t header) {
    for (uint32_t i = 0; i < count; ++i) {
        if (bytes.size() - at < header)
            return false;
        const std::byte* p = bytes.data() + at;
        const size_t id = get16(p), meta = get16(p + 2), text = get32(p + 4);
        if (!within_bounds(id, text, meta) || bytes.size() - at - header < id + text + meta)
            return false;
        at += header + id + text + meta;
    }
    return at == bytes.size();
}

// Reads the document at `at` (already walked): its views, and where the next starts.
size_t read_doc(std::span<const std::byte> bytes, size_t at, size_t header, BatchDoc& d) {
    const std::byte* p = bytes.data() + at;
    const size_t id = get16(p), meta = get16(p + 2), text = get32(p + 4);
    if (header == kSnapshotDocHeader) {
        d.tag = get64(p + 8);
        d.slot = get32(p + 16);
    }
    const char* s = reinterpret_cast<const char*>(p + header);
    d.id = { s, id };
    d.text = { s + id, text };
    d.metadata = { s + id + text, meta };
    return at + header + id + text + meta;
}

void copy(std::span<std::byte> out, size_t at, std::string_view s) { std::memcpy(out.data() + at, s.data(), s.size()); }

} // namespace

bool BatchWriter::add(std::string_view id, std::string_view text, std::string_view metadata) {
    if (!within_bounds(id.size(), text.size(), metadata.size()) || m_count == kMaxBatchDocs)
        return false;
    const size_t need = batch_doc_bytes(id.size(), text.size(), metadata.size());
    if (m_out.size() < m_at || m_out.size() - m_at < need)
        return false;
    std::byte* p = m_out.data() + m_at;
    put16(p, static_cast<uint16_t>(id.size()));
    put16(p + 2, static_cast<uint16_t>(metadata.size()));
    put32(p + 4, static_cast<uint32_t>(text.size()));
    copy(m_out, m_at + kDocHeader, id);
    copy(m_out, m_at + kDocHeader + id.size(), text);
    copy(m_out, m_at + kDocHeader + id.size() + text.size(), metadata);
    m_at += need;
    ++m_count;
    return true;
}

size_t BatchWriter::finish(uint64_t provenance) {
    write_batch_header(m_out, m_count, provenance);
    return m_at;
}

void write_batch_header(std::span<std::byte> out, uint32_t count, uint64_t provenance) {
    put32(out.data(), count);
    put32(out.data() + 4, 0);
    put64(out.data() + 8, provenance);
}

ktl::Result<Batch> Batch::parse(std::span<const std::byte> bytes) {
    if (bytes.size() < kBatchHeader)
        return ktl::Error::Corrupt;
    Batch b;
    b.m_bytes = bytes;
    b.m_count = get32(bytes.data());
    b.m_provenance = get64(bytes.data() + 8);
    if (b.m_count == 0 || b.m_count > kMaxBatchDocs || get32(bytes.data() + 4) != 0 ||
        !walk(bytes, kBatchHeader, b.m_count, kDocHeader))
        return ktl::Error::Corrupt;
    return b;
}

bool Batch::next(BatchDoc& d) {
    if (m_at >= m_bytes.size())
        return false;
    m_at = read_doc(m_bytes, m_at, kDocHeader, d);
    d.tag = m_provenance;
    return true;
}

size_t Batch::prefix_bytes(uint32_t n) const {
    size_t at = kBatchHeader;
    BatchDoc d;
    for (uint32_t i = 0; i < n && i < m_count; ++i)
        at = read_doc(m_bytes, at, kDocHeader, d);
    return at - kBatchHeader;
}

bool IdListWriter::add(std::string_view id) {
    if (id.empty() || id.size() > kMaxDocId || m_count == kMaxBatchIds || m_out.size() < m_at ||
        m_out.size() - m_at < 1 + id.size())
        return false;
    m_out[m_at] = static_cast<std::byte>(id.size());
    copy(m_out, m_at + 1, id);
    m_at += 1 + id.size();
    ++m_count;
    return true;
}

size_t IdListWriter::finish() {
    put32(m_out.data(), m_count);
    put32(m_out.data() + 4, 0);
    return m_at;
}

ktl::Result<IdList> IdList::parse(std::span<const std::byte> bytes) {
    if (bytes.size() < kIdListHeader)
        return ktl::Error::Corrupt;
    IdList l;
    l.m_bytes = bytes;
    l.m_count = get32(bytes.data());
    if (l.m_count == 0 || l.m_count > kMaxBatchIds || get32(bytes.data() + 4) != 0)
        return ktl::Error::Corrupt;
    size_t at = kIdListHeader;
    for (uint32_t i = 0; i < l.m_count; ++i) {
        if (at >= bytes.size())
            return ktl::Error::Corrupt;
        const size_t n = static_cast<uint8_t>(bytes[at]);
        if (n == 0 || n > kMaxDocId || bytes.size() - at - 1 < n)
            return ktl::Error::Corrupt;
        at += 1 + n;
    }
    if (at != bytes.size())
        return ktl::Error::Corrupt;
    return l;
}

bool IdList::next(std::string_view& id) {
    if (m_at >= m_bytes.size())
        return false;
    const size_t n = static_cast<uint8_t>(m_bytes[m_at]);
    id = { reinterpret_cast<const char*>(m_bytes.data() + m_at + 1), n };
    m_at += 1 + n;
    return true;
}

namespace {

// Calls emit(bytes) for the snapshot's header, then each live document's header and bytes.
template <typename Emit>
void emit_snapshot(const DocumentIndex& index, Emit&& emit) {
    const DocumentIndexParams p = index.params();
    std::byte h[kSnapshotHeader] = {};
    put32(h, kSnapshotMagic);
    put32(h + 4, kSnapshotVersion);
    put32(h + 8, index.documents().count());
    put32(h + 12, p.max_docs);
    put64(h + 16, p.text_bytes);
    put32(h + 24, p.max_terms);
    put32(h + 28, p.max_postings);
    put32(h + 32, p.term_bytes);
    put32(h + 36, index.model_checksum());
    put64(h + 40, index.semantic() ? index.vectors().snapshot_size() : 0);
    if (!emit(std::span<const std::byte>(h, sizeof h)))
        return;
    const DocTable& t = index.documents();
    for (uint32_t s = 0; s < t.params().max_docs; ++s) {
        const Doc d = t.get(s);
        if (d.id.empty())
            continue;
        std::byte dh[kSnapshotDocHeader];
        put16(dh, static_cast<uint16_t>(d.id.size()));
        put16(dh + 2, static_cast<uint16_t>(d.metadata.size()));
        put32(dh + 4, static_cast<uint32_t>(d.text.size()));
        put64(dh + 8, t.tag(s));
        put32(dh + 16, s);
        put32(dh + 20, 0);
        if (!emit(std::span<const std::byte>(dh, sizeof dh)))
            return;
        for (std::string_view part : { d.id, d.text, d.metadata })
            if (!emit(std::span<const std::byte>(reinterpret_cast<const std::byte*>(part.data()), part.size())))
                return;
    }
}

uint64_t documents_bytes(const DocumentIndex& index) {
    const DocTable& t = index.documents();
    return kSnapshotHeader + uint64_t(t.count()) * kSnapshotDocHeader + t.bytes_live();
}

size_t save_documents(const DocumentIndex& index, uint64_t offset, std::span<std::byte> out) {
    uint64_t at = 0; // the snapshot's offset of the next byte emitted
    size_t written = 0;
    emit_snapshot(index, [&](std::span<const std::byte> part) {
        const uint64_t end = at + part.size();
        if (end > offset) {
            const uint64_t from = offset > at ? offset - at : 0;
            const size_t n = static_cast<size_t>(part.size() - from < out.size() - written ? part.size() - from
                                                                                           : out.size() - written);
            std::memcpy(out.data() + written, part.data() + from, n);
            written += n;
        }
        at = end;
        return written < out.size();
    });
    return written;
}

} // namespace

uint64_t snapshot_size(const DocumentIndex& index) {
    return documents_bytes(index) + (index.semantic() ? index.vectors().snapshot_size() : 0);
}

size_t save_range(const DocumentIndex& index, uint64_t offset, std::span<std::byte> out) {
    // The embeddings' part: the HNSW index's own pages.
    const uint64_t docs_end = documents_bytes(index);
    size_t written = offset < docs_end ? save_documents(index, offset, out) : 0;
    if (written < out.size() && index.semantic()) {
        const uint64_t from = offset + written - docs_end;
        auto more = index.vectors().save_range(from, out.subspan(written));
        written += more ? *more : 0;
    }
    return written;
}

bool is_snapshot(std::span<const std::byte> bytes) {
    return bytes.size() >= kSnapshotHeader && get32(bytes.data()) == kSnapshotMagic;
}

ktl::Result<Snapshot> Snapshot::parse(std::span<const std::byte> bytes, uint32_t capacity) {
    if (!is_snapshot(bytes))
        return ktl::Error::Corrupt;
    const std::byte* h = bytes.data();
    if (get32(h + 4) != kSnapshotVersion)
        return ktl::Error::Unsupported;
    Snapshot s;
    s.m_bytes = bytes;
    s.m_count = get32(h + 8);
    s.m_params.max_docs = get32(h + 12);
    s.m_params.text_bytes = get64(h + 16);
    s.m_params.max_terms = get32(h + 24);
    s.m_params.max_postings = get32(h + 28);
    s.m_params.term_bytes = get32(h + 32);
    if (capacity > s.m_params.max_docs) {
        const DocumentIndexParams grown = params_for(capacity);
        s.m_params.max_docs = capacity;
        s.m_params.text_bytes = s.m_params.text_bytes > grown.text_bytes ? s.m_params.text_bytes : grown.text_bytes;
        s.m_params.max_terms = s.m_params.max_terms > grown.max_terms ? s.m_params.max_terms : grown.max_terms;
        s.m_params.max_postings = s.m_params.max_postings > grown.max_postings ? s.m_params.max_postings
                                                                               : grown.max_postings;
        s.m_params.term_bytes = s.m_params.term_bytes > grown.term_bytes ? s.m_params.term_bytes : grown.term_bytes;
    }
    s.m_model = get32(h + 36);
    const uint64_t vectors = get64(h + 40);
    if (vectors > bytes.size() - kSnapshotHeader || !s.m_params.validate() || s.m_count > s.m_params.max_docs)
        return ktl::Error::Corrupt;
    const size_t docs_end = bytes.size() - static_cast<size_t>(vectors);
    s.m_bytes = bytes.first(docs_end);
    s.m_vectors = bytes.subspan(docs_end);
    if (!walk(s.m_bytes, kSnapshotHeader, s.m_count, kSnapshotDocHeader))
        return ktl::Error::Corrupt;
    return s;
}

bool Snapshot::next(BatchDoc& d) {
    if (m_at >= m_bytes.size())
        return false;
    m_at = read_doc(m_bytes, m_at, kSnapshotDocHeader, d);
    return true;
}

ktl::Result<void> restore(DocumentIndex& index, Snapshot& snapshot) {
    BatchDoc d {};
    while (snapshot.next(d))
        if (auto r = index.restore(d.slot, d.id, d.text, d.metadata, d.tag); !r)
            return r.error() == ktl::Error::InvalidArgs ? ktl::Error::Corrupt : r.error();
    if (!index.semantic())
        return {};
    // The embeddings kept, when the same model made them; else (or damaged) made again.
    if (!snapshot.vectors().empty() && snapshot.model_checksum() == index.model_checksum() &&
        index.restore_vectors(snapshot.vectors()))
        return {};
    return index.embed_all();
}

DocumentIndexParams params_for(uint32_t max_docs, uint32_t text_bytes_each) {
    // A distinct word every 8 bytes at most (English has one every 6 bytes, 60 to 80 % of a short
    // passage's words distinct, fewer in a long one); a collection meets more words than any one
    // document holds, fewer than all its documents' together (the dictionary keeps every word seen).
    DocumentIndexParams p;
    p.max_docs = max_docs;
    p.text_bytes = uint64_t(max_docs) * text_bytes_each;
    if (p.text_bytes < (256u << 10))
        p.text_bytes = 256u << 10;
    const uint64_t terms = uint64_t(max_docs) * 4 < 16384 ? 16384 : uint64_t(max_docs) * 4;
    p.max_terms = static_cast<uint32_t>(terms > (1u << 20) ? (1u << 20) : terms);
    const uint64_t postings = uint64_t(max_docs) * (text_bytes_each / 8) + 4096;
    p.max_postings = static_cast<uint32_t>(postings > (1u << 24) ? (1u << 24) : postings);
    p.term_bytes = p.max_terms * 10;
    return p;
}

} // namespace text

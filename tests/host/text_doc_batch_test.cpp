// Documents as bytes (lib/text/doc_batch.h; issue 37): the batch a tool packs and the store logs,
// the id list of a delete, and a collection's snapshot (checkpoints, export), each read back only
// when every length adds up; and the log records that carry them (lib/storage/records.h).
#include <text/doc_batch.h>

#include <storage/records.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

struct Index {
    explicit Index(uint32_t max_docs = 64) {
        text::DocumentIndexParams p = text::params_for(max_docs, 512);
        memory.resize(text::DocumentIndex::memory_needed(p, nullptr));
        auto made = text::DocumentIndex::create(p, nullptr, memory);
        EXPECT_TRUE(made.ok());
        index = std::move(*made);
    }
    std::vector<std::byte> memory;
    text::DocumentIndex index;
};

std::vector<std::byte> batch_of(const std::vector<std::array<std::string, 3>>& docs, uint64_t provenance) {
    std::vector<std::byte> out(64 * 1024);
    text::BatchWriter w(out);
    for (const auto& d : docs)
        EXPECT_TRUE(w.add(d[0], d[1], d[2]));
    out.resize(w.finish(provenance));
    return out;
}

TEST(DocBatch, RoundTripsInOrder) {
    const auto bytes = batch_of({ { "a", "alpha text", "{\"k\":1}" }, { "b", "", "" }, { "ccc", "gamma", "" } }, 77);
    auto b = text::Batch::parse(bytes);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->count(), 3u);
    EXPECT_EQ(b->provenance(), 77u);
    text::BatchDoc d {};
    ASSERT_TRUE(b->next(d));
    EXPECT_EQ(d.id, "a");
    EXPECT_EQ(d.text, "alpha text");
    EXPECT_EQ(d.metadata, "{\"k\":1}");
    EXPECT_EQ(d.tag, 77u);
    ASSERT_TRUE(b->next(d));
    EXPECT_EQ(d.id, "b");
    EXPECT_EQ(d.text, "");
    ASSERT_TRUE(b->next(d));
    EXPECT_EQ(d.id, "ccc");
    EXPECT_FALSE(b->next(d));
    // The first two as a batch of their own (a change stored in part is logged in part).
    EXPECT_EQ(b->prefix_bytes(2), text::batch_doc_bytes(1, 10, 7) + text::batch_doc_bytes(1, 0, 0));
}

TEST(DocBatch, WriterRefusesWhatBreaksABound) {
    std::vector<std::byte> out(300);
    text::BatchWriter w(out);
    EXPECT_FALSE(w.add("", "no id", ""));
    EXPECT_FALSE(w.add(std::string(129, 'x'), "id too long", ""));
    EXPECT_FALSE(w.add("m", "", std::string(4097, 'x')));
    EXPECT_TRUE(w.add("fits", std::string(200, 't'), ""));
    EXPECT_FALSE(w.add("does-not-fit", std::string(200, 't'), ""));
    EXPECT_EQ(w.count(), 1u);
}

TEST(DocBatch, EveryTruncationAndEveryDamagedLengthIsRefused) {
    const auto good = batch_of({ { "one", "first text", "" }, { "two", "second", "{}" } }, 5);
    ASSERT_TRUE(text::Batch::parse(good).ok());
    for (size_t n = 0; n < good.size(); ++n)
        EXPECT_FALSE(text::Batch::parse({ good.data(), n }).ok()) << n;
    auto longer = good;
    longer.push_back(std::byte { 0 });
    EXPECT_FALSE(text::Batch::parse(longer).ok());
    // Each length field of each document (and the count) changed: never read past the bytes.
    for (size_t at :
         { size_t(0), size_t(16), size_t(18), size_t(20), size_t(16 + 8 + 3 + 10), size_t(16 + 8 + 3 + 10 + 4) }) {
        for (uint8_t v : { uint8_t(0), uint8_t(1), uint8_t(0x7f), uint8_t(0xff) }) {
            auto bad = good;
            bad[at] = std::byte { v };
            if (bad == good)
                continue;
            auto b = text::Batch::parse(bad);
            if (!b.ok())
                continue;
            // Accepted only when the lengths still add up: then every view is inside the bytes.
            text::BatchDoc d {};
            while (b->next(d)) {
                EXPECT_GE(reinterpret_cast<const std::byte*>(d.id.data()), bad.data());
                EXPECT_LE(reinterpret_cast<const std::byte*>(d.metadata.data() + d.metadata.size()),
                          bad.data() + bad.size());
            }
        }
    }
}

TEST(DocBatch, IdListRoundTripsAndRefusesDamage) {
    std::vector<std::byte> out(1024);
    text::IdListWriter w(out);
    EXPECT_TRUE(w.add("x"));
    EXPECT_TRUE(w.add(std::string(128, 'y')));
    EXPECT_FALSE(w.add(""));
    EXPECT_FALSE(w.add(std::string(129, 'z')));
    out.resize(w.finish());
    auto l = text::IdList::parse(out);
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->count(), 2u);
    std::string_view id;
    ASSERT_TRUE(l->next(id));
    EXPECT_EQ(id, "x");
    ASSERT_TRUE(l->next(id));
    EXPECT_EQ(id.size(), 128u);
    EXPECT_FALSE(l->next(id));
    for (size_t n = 0; n < out.size(); ++n)
        EXPECT_FALSE(text::IdList::parse({ out.data(), n }).ok()) << n;
    auto bad = out;
    bad[8] = std::byte { 0 }; // an empty id
    EXPECT_FALSE(text::IdList::parse(bad).ok());
}

TEST(DocSnapshot, PagedExportLoadsBackTheSameDocumentsAndTags) {
    Index a(128);
    std::mt19937 rng(7);
    std::map<std::string, std::pair<std::string, uint64_t>> want;
    for (int i = 0; i < 300; ++i) {
        const std::string id = "doc-" + std::to_string(rng() % 100);
        if (rng() % 4 == 0) {
            (void)a.index.remove(id);
            want.erase(id);
            continue;
        }
        std::string text;
        for (int w = 0, n = 1 + rng() % 12; w < n; ++w)
            text += "word" + std::to_string(rng() % 50) + " ";
        bool replaced = false;
        const uint64_t tag = 1000 + i;
        ASSERT_TRUE(a.index.upsert(id, text, "{\"i\":" + std::to_string(i) + "}", replaced, tag).ok());
        want[id] = { text, tag };
    }
    const uint64_t size = text::snapshot_size(a.index);
    std::vector<std::byte> whole(size);
    ASSERT_EQ(text::save_range(a.index, 0, whole), size);
    // Pages of odd sizes give the same bytes.
    for (size_t page : { size_t(1), size_t(7), size_t(100), size_t(4096) }) {
        std::vector<std::byte> paged;
        for (uint64_t off = 0; off < size; off += page) {
            std::vector<std::byte> chunk(std::min<uint64_t>(page, size - off));
            ASSERT_EQ(text::save_range(a.index, off, chunk), chunk.size());
            paged.insert(paged.end(), chunk.begin(), chunk.end());
        }
        EXPECT_EQ(paged, whole) << page;
    }
    ASSERT_TRUE(text::is_snapshot(whole));
    auto s = text::Snapshot::parse(whole, 0);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->count(), want.size());
    EXPECT_EQ(s->params().max_docs, 128u);
    size_t seen = 0;
    text::BatchDoc d {};
    while (s->next(d)) {
        auto it = want.find(std::string(d.id));
        ASSERT_NE(it, want.end()) << d.id;
        EXPECT_EQ(d.text, it->second.first);
        EXPECT_EQ(d.tag, it->second.second);
        ++seen;
    }
    EXPECT_EQ(seen, want.size());
    // Restored into a new index: the same slots, the same lexical answers.
    {
        auto again = text::Snapshot::parse(whole, 0);
        std::vector<std::byte> memory(text::DocumentIndex::memory_needed(again->params(), nullptr));
        auto b = text::DocumentIndex::create(again->params(), nullptr, memory);
        ASSERT_TRUE(b.ok());
        ASSERT_TRUE(text::restore(*b, *again).ok());
        EXPECT_EQ(b->documents().count(), want.size());
        for (const auto& [id, v] : want)
            EXPECT_EQ(b->documents().find(id), a.index.documents().find(id)) << id;
        std::vector<text::DocHit> x(10), y(10);
        for (const char* q : { "word1", "word7 word30", "word49" }) {
            const size_t nx = *a.index.search(q, text::SearchMode::Lexical, x);
            const size_t ny = *b->search(q, text::SearchMode::Lexical, y);
            ASSERT_EQ(nx, ny) << q;
            for (size_t i = 0; i < nx; ++i)
                EXPECT_EQ(x[i].slot, y[i].slot) << q;
        }
    }
    // A larger capacity asked for grows every bound; damage is refused.
    EXPECT_EQ(text::Snapshot::parse(whole, 4000)->params().max_docs, 4000u);
    for (size_t n = text::kSnapshotHeader; n < whole.size(); n += 13)
        EXPECT_FALSE(text::Snapshot::parse({ whole.data(), n }, 0).ok()) << n;
    auto other = whole;
    other[4] = std::byte { 3 }; // version 3
    EXPECT_EQ(text::Snapshot::parse(other, 0).error(), ktl::Error::Unsupported);
}

TEST(DocRecords, BatchAndIdListTravelInLogRecords) {
    const auto body = batch_of({ { "k", "text", "" } }, 9);
    std::vector<std::byte> rec(storage::document_record_bytes(body.size()));
    ASSERT_EQ(*storage::encode_document(rec, "notes", {}, body), rec.size());
    auto d = storage::decode_record(uint16_t(storage::RecordType::DocUpsert), rec);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->name, "notes");
    EXPECT_TRUE(std::equal(d->body.begin(), d->body.end(), body.begin(), body.end()));
    // A part of a batch: its header written afresh, then the first documents' bytes.
    std::byte head[text::kBatchHeader];
    text::write_batch_header(head, 1, 9);
    std::vector<std::byte> rec2(storage::document_record_bytes(body.size()));
    ASSERT_TRUE(storage::encode_document(rec2, "notes", head, std::span(body).subspan(text::kBatchHeader)).ok());
    EXPECT_EQ(rec2, rec);
    EXPECT_FALSE(storage::decode_record(uint16_t(storage::RecordType::DocDelete), { rec.data(), 70 }).ok());
    EXPECT_EQ(storage::document_record_bytes(300 * 1024), 0u);
}

TEST(DocParams, DefaultCollectionFitsItsBudget) {
    // collection_create's default: 10,000 documents in a collection's 64 MiB, with a 100-d model.
    const text::DocumentIndexParams p = text::params_for(10000);
    ASSERT_TRUE(p.validate());
    const size_t lexical_only = text::DocumentIndex::memory_needed(p, nullptr);
    EXPECT_GT(lexical_only, 0u);
    EXPECT_LT(lexical_only, 48ull << 20);
    std::printf("params_for(10000): %zu bytes without a model\n", lexical_only);
}

} // namespace

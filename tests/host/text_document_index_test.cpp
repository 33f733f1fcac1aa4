// A document collection's indexes together (lib/text/document_index.h; issue 37): the table, BM25
// and the embeddings' HNSW index change together or not at all, and each search mode answers.
#include <text/doc_batch.h>
#include <text/document_index.h>

#include "glove_rows.h"
#include "model_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

const std::vector<std::byte>& model_file() {
    static const std::vector<std::byte> file = embed_model::build(glove::default_path(BASALT_REPO_ROOT), 20000).file;
    return file;
}

struct Fixture {
    explicit Fixture(bool with_model, uint32_t terms = 4096) {
        if (with_model) {
            auto m = text::EmbedModel::open(model_file());
            EXPECT_TRUE(m.ok());
            model = *m;
        }
        text::DocumentIndexParams p;
        p.max_docs = 64;
        p.text_bytes = 64 * 1024;
        p.max_terms = terms;
        p.max_postings = 8192;
        p.term_bytes = 64 * 1024;
        memory.resize(text::DocumentIndex::memory_needed(p, with_model ? &model : nullptr));
        auto made = text::DocumentIndex::create(p, with_model ? &model : nullptr, memory);
        EXPECT_TRUE(made.ok());
        index = std::move(*made);
    }
    uint32_t put(const char* id, const char* text) {
        bool replaced = false;
        auto r = index.upsert(id, text, "", replaced);
        EXPECT_TRUE(r.ok()) << id;
        return r.ok() ? *r : ~0u;
    }
    std::vector<std::string> ids(const char* query, text::SearchMode mode, size_t k = 10) {
        std::vector<text::DocHit> hits(k);
        auto n = index.search(query, mode, hits);
        EXPECT_TRUE(n.ok());
        std::vector<std::string> out;
        for (size_t i = 0; n.ok() && i < *n; ++i)
            out.emplace_back(index.documents().get(hits[i].slot).id);
        return out;
    }
    text::EmbedModel model;
    std::vector<std::byte> memory;
    text::DocumentIndex index;
};

const char* const kFacts[][2] = {
    { "paris", "The Eiffel Tower stands in Paris, the capital of France." },
    { "rome", "The Colosseum is an ancient amphitheatre in Rome, Italy." },
    { "tokyo", "Tokyo is the capital of Japan and its largest city." },
    { "python", "Python is a programming language used for scripting and data analysis." },
    { "piano", "She practised the piano every evening before the concert." },
};

TEST(TextDocumentIndex, EachModeFindsWhatItShould) {
    Fixture f(true);
    for (const auto& fact : kFacts)
        f.put(fact[0], fact[1]);
    EXPECT_EQ(f.ids("eiffel tower", text::SearchMode::Lexical), std::vector<std::string> { "paris" });
    // The exact text of a document is its own nearest embedding.
    for (const auto& fact : kFacts)
        EXPECT_EQ(f.ids(fact[1], text::SearchMode::Semantic, 1).at(0), fact[0]) << fact[0];
    // Meaning without shared words: no lexical hit, a semantic one.
    EXPECT_TRUE(f.ids("software code", text::SearchMode::Lexical).empty());
    EXPECT_EQ(f.ids("software code", text::SearchMode::Semantic, 1).at(0), "python");
    EXPECT_EQ(f.ids("musician performing", text::SearchMode::Semantic, 1).at(0), "piano");
    // Hybrid: a document both lists rank first comes first.
    EXPECT_EQ(f.ids("capital of japan", text::SearchMode::Hybrid, 1).at(0), "tokyo");
    const auto all = f.ids("capital city", text::SearchMode::Hybrid);
    EXPECT_EQ(all.size(), 5u) << "the semantic list brings every document";
}

TEST(TextDocumentIndex, HybridScoresAreReciprocalRanks) {
    Fixture f(true);
    for (const auto& fact : kFacts)
        f.put(fact[0], fact[1]);
    std::vector<text::DocHit> lex(10), sem(10), hyb(10);
    const size_t nl = *f.index.search("capital", text::SearchMode::Lexical, lex);
    const size_t ns = *f.index.search("capital", text::SearchMode::Semantic, sem);
    const size_t nh = *f.index.search("capital", text::SearchMode::Hybrid, hyb);
    ASSERT_GT(nl, 0u);
    ASSERT_GT(ns, 0u);
    for (size_t h = 0; h < nh; ++h) {
        double want = 0;
        for (size_t i = 0; i < nl; ++i)
            if (lex[i].slot == hyb[h].slot)
                want += 1.0 / (60 + i + 1);
        for (size_t i = 0; i < ns; ++i)
            if (sem[i].slot == hyb[h].slot)
                want += 1.0 / (60 + i + 1);
        EXPECT_NEAR(hyb[h].score, want, 1e-6) << h;
        if (h > 0) {
            EXPECT_GE(hyb[h - 1].score, hyb[h].score);
        }
    }
}

// A question's common words ("the", "user": in every document) carry no evidence in hybrid search:
// ranked by them, the lexical list would out-vote the meaning in a small collection.
TEST(TextDocumentIndex, HybridIgnoresWordsInMostDocuments) {
    Fixture f(true);
    f.put("fact-1", "The user's daughter is allergic to peanuts.");
    f.put("fact-2", "The user prefers meetings after ten in the morning.");
    f.put("fact-3", "The user's car is a blue Volvo estate.");
    EXPECT_EQ(f.ids("what vehicle does the user drive?", text::SearchMode::Semantic, 1).at(0), "fact-3");
    EXPECT_EQ(f.ids("what vehicle does the user drive?", text::SearchMode::Hybrid, 1).at(0), "fact-3");
    // Textbook BM25 (lexical mode) still counts them.
    EXPECT_EQ(f.ids("the user", text::SearchMode::Lexical).size(), 3u);
    // A word in one document of three is evidence in both.
    EXPECT_EQ(f.ids("peanuts", text::SearchMode::Hybrid, 1).at(0), "fact-1");
}

// A snapshot keeps the embeddings' index: put back with the same model, nothing is embedded again
// and every semantic answer is the same; for another model (or with that part damaged), every
// document is embedded again, with the same answers for the same texts.
TEST(TextDocumentIndex, SnapshotKeepsTheEmbeddings) {
    Fixture f(true);
    for (const auto& fact : kFacts)
        f.put(fact[0], fact[1]);
    bool replaced = false;
    ASSERT_TRUE(f.index.upsert("rome", "Rome has the Pantheon and the Trevi fountain.", "", replaced).ok());
    ASSERT_TRUE(f.index.remove("paris").ok());
    std::vector<std::byte> snap(text::snapshot_size(f.index));
    ASSERT_EQ(text::save_range(f.index, 0, snap), snap.size());
    auto answers = [](text::DocumentIndex& x) {
        std::vector<std::string> out;
        for (const char* q : { "software code", "musician performing", "ancient monuments", "asian capital" }) {
            std::vector<text::DocHit> hits(3);
            const size_t n = *x.search(q, text::SearchMode::Semantic, hits);
            for (size_t i = 0; i < n; ++i)
                out.push_back(std::string(x.documents().get(hits[i].slot).id) + "@" + std::to_string(hits[i].score));
        }
        return out;
    };
    const auto want = answers(f.index);
    for (int variant = 0; variant < 3; ++variant) {
        std::vector<std::byte> bytes = snap;
        if (variant == 1) // another model made them
            bytes[36] ^= std::byte { 1 };
        if (variant == 2) // the embeddings' part damaged
            bytes[bytes.size() - 5] ^= std::byte { 0x40 };
        auto s = text::Snapshot::parse(bytes, 0);
        ASSERT_TRUE(s.ok()) << variant;
        EXPECT_EQ(s->vectors().size(), f.index.vectors().snapshot_size());
        std::vector<std::byte> memory(text::DocumentIndex::memory_needed(s->params(), &f.model));
        auto b = text::DocumentIndex::create(s->params(), &f.model, memory);
        ASSERT_TRUE(b.ok());
        ASSERT_TRUE(text::restore(*b, *s).ok()) << variant;
        EXPECT_EQ(b->vectors().size(), f.index.vectors().size()) << variant;
        // Kept: no graph work at all; made again: each insert computed distances.
        EXPECT_EQ(b->vectors().stats().distance_computations == 0, variant == 0) << variant;
        EXPECT_EQ(answers(*b), want) << variant;
    }
}

TEST(TextDocumentIndex, ReplaceAndRemoveReachEveryIndex) {
    Fixture f(true);
    for (const auto& fact : kFacts)
        f.put(fact[0], fact[1]);
    bool replaced = false;
    ASSERT_TRUE(f.index.upsert("rome", "Venice is famous for its canals and gondolas.", "{\"v\":2}", replaced).ok());
    EXPECT_TRUE(replaced);
    EXPECT_TRUE(f.ids("colosseum", text::SearchMode::Lexical).empty()) << "the old words are gone";
    EXPECT_EQ(f.ids("gondolas", text::SearchMode::Lexical), std::vector<std::string> { "rome" });
    EXPECT_EQ(f.ids("Venice is famous for its canals and gondolas.", text::SearchMode::Semantic, 1).at(0), "rome");
    ASSERT_TRUE(f.index.remove("paris").ok());
    EXPECT_EQ(f.index.remove("paris").error(), ktl::Error::NotFound);
    EXPECT_TRUE(f.ids("eiffel", text::SearchMode::Lexical).empty());
    for (auto mode : { text::SearchMode::Semantic, text::SearchMode::Hybrid })
        for (const auto& id : f.ids("The Eiffel Tower stands in Paris, the capital of France.", mode))
            EXPECT_NE(id, "paris");
    EXPECT_EQ(f.index.documents().count(), 4u);
}

TEST(TextDocumentIndex, AChangeThatDoesNotFitChangesNothing) {
    Fixture f(true, 24); // a dictionary of 24 terms
    f.put("a", "alpha beta gamma delta");
    f.put("b", "epsilon zeta eta theta");
    bool replaced = false;
    std::string many;
    for (int i = 0; i < 30; ++i)
        many += "word" + std::to_string(i) + " ";
    EXPECT_EQ(f.index.upsert("a", many, "", replaced).error(), ktl::Error::Full);
    EXPECT_EQ(f.index.documents().get(f.index.documents().find("a")).text, "alpha beta gamma delta") << "as it was";
    EXPECT_EQ(f.ids("gamma", text::SearchMode::Lexical), std::vector<std::string> { "a" });
    EXPECT_EQ(f.ids("alpha beta gamma delta", text::SearchMode::Semantic, 1).at(0), "a");
    EXPECT_EQ(f.index.upsert("c", many, "", replaced).error(), ktl::Error::Full);
    EXPECT_EQ(f.index.documents().find("c"), text::DocTable::kNone);
    EXPECT_EQ(f.index.documents().count(), 2u);
}

TEST(TextDocumentIndex, WithoutAModelOnlyLexical) {
    Fixture f(false);
    for (const auto& fact : kFacts)
        f.put(fact[0], fact[1]);
    EXPECT_FALSE(f.index.semantic());
    EXPECT_EQ(f.ids("piano", text::SearchMode::Lexical), std::vector<std::string> { "piano" });
    std::vector<text::DocHit> hits(5);
    EXPECT_EQ(f.index.search("piano", text::SearchMode::Semantic, hits).error(), ktl::Error::Unsupported);
    EXPECT_EQ(f.index.search("piano", text::SearchMode::Hybrid, hits).error(), ktl::Error::Unsupported);
}

} // namespace

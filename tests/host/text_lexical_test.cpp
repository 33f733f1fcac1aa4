// The tokenizer and the lexical (BM25) index of document collections (lib/text; issue 37).
#include <text/lexical_index.h>
#include <text/tokenizer.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

std::vector<std::string> tokens(std::string_view s) {
    std::vector<std::string> out;
    text::for_each_token(s, [&](std::string_view t) {
        out.emplace_back(t);
        return true;
    });
    return out;
}

TEST(TextTokenizer, SplitsLowersAndKeepsOtherScriptsWhole) {
    EXPECT_EQ(tokens("Hello, World! 42x don't"), (std::vector<std::string> { "hello", "world", "42x", "don", "t" }));
    EXPECT_EQ(tokens("caf\xc3\xa9 na\xc3\xafve"), (std::vector<std::string> { "caf\xc3\xa9", "na\xc3\xafve" }));
    EXPECT_TRUE(tokens("").empty());
    EXPECT_TRUE(tokens(" .,;-- ").empty());
    EXPECT_EQ(tokens("a-b_c"), (std::vector<std::string> { "a", "b", "c" }));
    const std::string longest(40, 'Q');
    const auto t = tokens("x " + longest + " y");
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[1], std::string(text::kMaxTokenBytes, 'q')) << "a long word keeps its first bytes";
    EXPECT_EQ(text::token_count("one two  three"), 3u);
    size_t seen = 0;
    EXPECT_EQ(text::for_each_token("a b c d", [&](std::string_view) { return ++seen < 2; }), 2u) << "stopped";
}

TEST(TextLn, MatchesTheHostsLogarithm) {
    for (double x : { 1e-300, 1e-9, 0.001, 0.5, 1.0, 1.5, 2.0, 2.6666666, 10.0, 12345.678, 1e12, 1e300 })
        EXPECT_NEAR(text::ln(x), std::log(x), 1e-12 * std::max(1.0, std::fabs(std::log(x)))) << x;
}

struct Fixture {
    explicit Fixture(text::LexicalParams p) : memory(text::LexicalIndex::memory_needed(p)) {
        auto made = text::LexicalIndex::create(p, memory);
        EXPECT_TRUE(made.ok());
        index = std::move(*made);
    }
    std::vector<std::byte> memory;
    text::LexicalIndex index;
};

text::LexicalParams params(uint32_t docs = 64, uint32_t terms = 256, uint32_t postings = 1024, uint32_t bytes = 4096) {
    text::LexicalParams p;
    p.max_docs = docs;
    p.max_terms = terms;
    p.max_postings = postings;
    p.term_bytes = bytes;
    return p;
}

// Worked by hand: N = 3, avgdl = (3 + 6 + 3) / 3 = 4, k1 = 1.2, b = 0.75.
//   idf(cat) = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln 2.6667 = 0.980829
//   idf(sat) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln 1.6    = 0.470004
//   d0 "the cat sat" (3 tokens): K = 1.2 (0.25 + 0.75 * 3/4) = 0.975
//       cat: 0.980829 * 2.2 / 1.975 = 1.092568;  sat: 0.470004 * 2.2 / 1.975 = 0.523549;  1.616117
//   d1 "the dog sat on the mat" (6): K = 1.2 (0.25 + 0.75 * 6/4) = 1.65
//       sat: 0.470004 * 2.2 / 2.65 = 0.390192
//   d2 "cats and dogs": shares no term ("cats" is not "cat": no stemming).
TEST(TextLexicalIndex, ScoresAHandWorkedExample) {
    Fixture f(params());
    ASSERT_TRUE(f.index.add(0, "The cat sat").ok());
    ASSERT_TRUE(f.index.add(1, "the dog sat on the mat").ok());
    ASSERT_TRUE(f.index.add(2, "cats and dogs").ok());
    EXPECT_EQ(f.index.documents(), 3u);
    EXPECT_EQ(f.index.tokens(), 12u);
    EXPECT_EQ(f.index.document_frequency("the"), 2u);
    EXPECT_EQ(f.index.document_frequency("sat"), 2u);
    text::LexicalHit hits[10];
    const size_t n = f.index.search("cat, SAT!", hits);
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(hits[0].slot, 0u);
    EXPECT_NEAR(hits[0].score, 1.616117, 1e-5);
    EXPECT_EQ(hits[1].slot, 1u);
    EXPECT_NEAR(hits[1].score, 0.390192, 1e-5);
    EXPECT_EQ(f.index.search("cat cat cat sat", hits), 2u);
    EXPECT_NEAR(hits[0].score, 1.616117, 1e-5) << "a query's repeated term counts once";
    EXPECT_EQ(f.index.search("unicorn", hits), 0u);
    EXPECT_EQ(f.index.search("sat", std::span<text::LexicalHit>(hits, 1)), 1u);
    EXPECT_EQ(hits[0].slot, 0u) << "the shorter document first";

    // Removing d1 changes N, df and avgdl: sat is then in 1 of 2 documents, avgdl 3.
    ASSERT_TRUE(f.index.remove(1, "the dog sat on the mat").ok());
    EXPECT_EQ(f.index.document_frequency("sat"), 1u);
    EXPECT_EQ(f.index.search("sat", hits), 1u);
    const double idf = std::log(1 + 1.5 / 1.5), k = 1.2 * (0.25 + 0.75 * 3.0 / 3.0);
    EXPECT_NEAR(hits[0].score, idf * 2.2 / (1 + k), 1e-5);
}

TEST(TextLexicalIndex, RefusesWhatDoesNotFitAndStaysAsItWas) {
    Fixture f(params(4, 8, 6, 64));
    EXPECT_EQ(f.index.add(4, "x").error(), ktl::Error::InvalidArgs) << "slot out of range";
    ASSERT_TRUE(f.index.add(0, "alpha beta").ok());
    EXPECT_EQ(f.index.add(0, "gamma").error(), ktl::Error::InvalidArgs) << "slot in use";
    EXPECT_EQ(f.index.remove(0, "alpha beta!").error(), ktl::Error::InvalidArgs) << "the same tokens, another text";
    EXPECT_TRUE(f.index.contains(0));
}

TEST(TextLexicalIndex, FullDictionaryOrPostingsChangeNothing) {
    Fixture f(params(4, 4, 5, 64));
    ASSERT_TRUE(f.index.add(0, "a b c").ok());
    EXPECT_EQ(f.index.add(1, "d e").error(), ktl::Error::Full) << "five distinct terms, room for four";
    EXPECT_EQ(f.index.documents(), 1u);
    EXPECT_FALSE(f.index.contains(1));
    EXPECT_EQ(f.index.postings(), 3u);
    EXPECT_EQ(f.index.add(1, "a b c").error(), ktl::Error::Full) << "six postings, room for five";
    EXPECT_EQ(f.index.postings(), 3u);
    ASSERT_TRUE(f.index.add(1, "a b").ok());
    EXPECT_EQ(f.index.postings(), 5u);
    EXPECT_EQ(f.index.remove(2, "a").error(), ktl::Error::NotFound);
    EXPECT_EQ(f.index.remove(1, "a b c").error(), ktl::Error::InvalidArgs) << "not the text it was given";
    ASSERT_TRUE(f.index.remove(1, "a b").ok());
    EXPECT_EQ(f.index.postings(), 3u);
}

// A reference BM25 over maps, recomputed from scratch for each query.
struct Reference {
    std::map<uint32_t, std::vector<std::string>> docs;
    std::vector<text::LexicalHit> search(const std::string& q, size_t k) const {
        const double n = double(docs.size());
        double total = 0;
        for (const auto& [s, d] : docs)
            total += double(d.size());
        const double avgdl = total / n;
        std::set<std::string> terms;
        for (auto& t : tokens(q))
            terms.insert(t);
        std::map<uint32_t, double> score;
        for (const auto& t : terms) {
            double df = 0;
            for (const auto& [s, d] : docs)
                df += std::count(d.begin(), d.end(), t) ? 1 : 0;
            if (df == 0)
                continue;
            const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
            for (const auto& [s, d] : docs) {
                const double tf = double(std::count(d.begin(), d.end(), t));
                if (tf > 0)
                    score[s] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * double(d.size()) / avgdl));
            }
        }
        std::vector<text::LexicalHit> out;
        for (auto& [s, v] : score)
            out.push_back({ s, float(v) });
        std::sort(out.begin(), out.end(),
                  [](auto& a, auto& b) { return a.score > b.score || (a.score == b.score && a.slot < b.slot); });
        if (out.size() > k)
            out.resize(k);
        return out;
    }
};

TEST(TextLexicalIndex, AgreesWithAReferenceThroughAddsAndRemoves) {
    std::mt19937 rng(37);
    std::vector<std::string> vocab;
    for (int i = 0; i < 60; ++i)
        vocab.push_back("w" + std::to_string(i * 7919 % 1000));
    Fixture f(params(40, 100, 2000, 4096));
    Reference ref;
    std::map<uint32_t, std::string> texts;
    for (int round = 0; round < 600; ++round) {
        const uint32_t slot = rng() % 40;
        if (texts.count(slot)) {
            ASSERT_TRUE(f.index.remove(slot, texts[slot]).ok());
            texts.erase(slot);
            ref.docs.erase(slot);
        } else {
            std::string t;
            const int words = 1 + int(rng() % 30);
            for (int w = 0; w < words; ++w) // (a skewed draw: some words common, most rare)
                t += vocab[std::min<size_t>(rng() % 60, rng() % 60)] + (rng() % 5 ? " " : ", ");
            ASSERT_TRUE(f.index.add(slot, t).ok());
            texts[slot] = t;
            ref.docs[slot] = tokens(t);
        }
        if (ref.docs.empty())
            continue;
        const std::string q = vocab[rng() % 60] + " " + vocab[rng() % 60] + " " + vocab[rng() % 8];
        text::LexicalHit hits[10];
        const size_t n = f.index.search(q, hits);
        const auto want = ref.search(q, 10);
        ASSERT_EQ(n, want.size()) << "round " << round;
        for (size_t i = 0; i < n; ++i) {
            EXPECT_NEAR(hits[i].score, want[i].score, 1e-4 * std::max(1.0f, want[i].score)) << round << " " << i;
            const bool clear = i + 1 >= n || std::fabs(want[i].score - want[i + 1].score) > 1e-4;
            const bool after_clear = i == 0 || std::fabs(want[i - 1].score - want[i].score) > 1e-4;
            if (clear && after_clear) {
                EXPECT_EQ(hits[i].slot, want[i].slot) << round << " " << i;
            }
        }
    }
    // Everything removed: nothing left, and the freed blocks serve again.
    for (auto& [slot, t] : texts)
        ASSERT_TRUE(f.index.remove(slot, t).ok());
    EXPECT_EQ(f.index.documents(), 0u);
    EXPECT_EQ(f.index.postings(), 0u);
    EXPECT_EQ(f.index.tokens(), 0u);
    text::LexicalHit hits[4];
    EXPECT_EQ(f.index.search(vocab[0], hits), 0u);
}

TEST(TextLexicalIndex, ParamsAreChecked) {
    text::LexicalParams p = params();
    EXPECT_TRUE(p.validate());
    p.b = 1.5f;
    EXPECT_FALSE(p.validate());
    EXPECT_EQ(text::LexicalIndex::memory_needed(p), 0u);
    std::vector<std::byte> some(64);
    EXPECT_EQ(text::LexicalIndex::create(p, some).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(text::LexicalIndex::create(params(), some).error(), ktl::Error::NoMemory);
}

} // namespace

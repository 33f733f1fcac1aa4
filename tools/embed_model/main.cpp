// basalt-embed-model --out FILE [--rows N] [--glove PATH]: the embedder's model (docs/documents.md).
// basalt-embed-model --embed MODEL TEXT...: each text's embedding by the host's build of the
// embedder, one JSON array per line (what the kernel's text_embed must answer: tests compare).
#include "glove_rows.h"
#include "model_builder.h"

#include <text/embed_model.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int embed(const char* model_path, int count, char** texts) {
    std::ifstream in(model_path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto model = text::EmbedModel::open({ reinterpret_cast<const std::byte*>(bytes.data()), bytes.size() });
    if (!model) {
        std::fprintf(stderr, "basalt-embed-model: %s: not a model this build reads (%s)\n", model_path,
                     ktl::error_name(model.error()));
        return 1;
    }
    std::vector<float> v(model->dim());
    for (int i = 0; i < count; ++i) {
        const size_t known = model->embed(texts[i], v);
        std::printf("{\"known_words\":%zu,\"vector\":[", known);
        for (size_t d = 0; d < v.size(); ++d)
            std::printf("%s%.9g", d ? "," : "", static_cast<double>(v[d]));
        std::printf("]}\n");
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && std::strcmp(argv[1], "--embed") == 0)
        return embed(argv[2], argc - 3, argv + 3);
    std::string out, glove_path;
    // 100,000 rows: recall@10 on WordNet glosses (tests/mcp/recall_test.mjs, a tuning seed of its
    // own) rose from 20,000 to 100,000 rows and not past it (docs/documents.md).
    size_t rows = 100000;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--out" && i + 1 < argc)
            out = argv[++i];
        else if (a == "--rows" && i + 1 < argc)
            rows = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--glove" && i + 1 < argc)
            glove_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: basalt-embed-model --out FILE [--rows N (100000)] [--glove PATH]\n");
            return 2;
        }
    }
    if (out.empty() || rows == 0) {
        std::fprintf(stderr, "basalt-embed-model: --out FILE is needed, --rows at least 1\n");
        return 2;
    }
    if (glove_path.empty())
        glove_path = glove::default_path(BASALT_REPO_ROOT);
    const auto built = embed_model::build(glove_path, rows);
    if (!built.error.empty()) {
        std::fprintf(stderr, "basalt-embed-model: %s\n", built.error.c_str());
        return 1;
    }
    FILE* f = std::fopen(out.c_str(), "wb");
    if (!f || std::fwrite(built.file.data(), 1, built.file.size(), f) != built.file.size() || std::fclose(f) != 0) {
        std::fprintf(stderr, "basalt-embed-model: cannot write %s\n", out.c_str());
        return 1;
    }
    std::printf("basalt-embed-model: %zu of the first %zu GloVe rows kept (single tokens), %zu bytes -> %s\n",
                built.words, built.rows_read, built.file.size(), out.c_str());
    return 0;
}

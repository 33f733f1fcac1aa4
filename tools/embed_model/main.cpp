// basalt-embed-model --out FILE [--rows N] [--glove PATH]: the embedder's model (docs/documents.md).
#include "glove_rows.h"
#include "model_builder.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
    std::string out, glove_path;
    size_t rows = 50000;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--out" && i + 1 < argc)
            out = argv[++i];
        else if (a == "--rows" && i + 1 < argc)
            rows = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--glove" && i + 1 < argc)
            glove_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: basalt-embed-model --out FILE [--rows N (50000)] [--glove PATH]\n");
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

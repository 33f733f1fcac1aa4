#pragma once
// One NODE record of a snapshot (format in snapshot.cpp), for both writers: the whole snapshot
// (snapshot.cpp) and a window of it (snapshot_range.cpp). Internal to lib/hnsw.
#include <bit>
#include <cstdint>

#include <hnsw/index.h>

namespace hnsw {

template <typename Writer>
void Index::emit_node(Writer& w, uint32_t s) const {
    const NodeHeader* n = node(s);
    w.u8(n->flags);
    if (n->flags == 0)
        return;
    w.u8(n->level);
    w.u16(0);
    w.u64(n->id);
    w.u64(n->tag);
    for (uint32_t l = 0; l <= n->level; ++l) {
        const uint32_t* list = links(s, l);
        if constexpr (std::endian::native == std::endian::little) {
            w.bytes(list, 4ull * (list[0] + 1)); // count, then the links: the format's bytes
        } else {
            w.u32(list[0]);
            for (uint32_t i = 1; i <= list[0]; ++i)
                w.u32(list[i]);
        }
    }
    const float* v = vec(s);
    if constexpr (std::endian::native == std::endian::little) {
        w.bytes(v, 4ull * m_params.dim); // the stored bits are the format's bytes: one copy
    } else {
        for (uint32_t i = 0; i < m_params.dim; ++i)
            w.f32(v[i]);
    }
}

} // namespace hnsw

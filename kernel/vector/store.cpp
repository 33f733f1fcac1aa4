#include "store.h"

#include "../text/embedder.h"

#include "../clock.h"

namespace vector {
namespace {

Named g_named[kMaxNamed];

} // namespace

Named* find(std::string_view name) {
    for (auto& n : g_named)
        if (n.collection && std::string_view(n.name, n.length) == name)
            return &n;
    return nullptr;
}

ktl::Result<Named*> add(std::string_view name, uint64_t object_id, Collection* collection) {
    if (!valid_name(name))
        return ktl::Error::InvalidArgs;
    if (find(name))
        return ktl::Error::Exists;
    for (auto& n : g_named) {
        if (n.collection)
            continue;
        for (size_t i = 0; i < name.size(); ++i)
            n.name[i] = name[i];
        n.name[name.size()] = '\0';
        n.length = static_cast<uint8_t>(name.size());
        n.object_id = object_id;
        n.collection = collection;
        return &n;
    }
    return ktl::Error::Full;
}

void remove(Named* entry) { *entry = Named {}; }

uint32_t list(StoreEntry* out, uint32_t max) {
    uint32_t n = 0;
    for (const auto& e : g_named) {
        if (!e.collection || n >= max)
            continue;
        StoreEntry& s = out[n++];
        s = StoreEntry {};
        for (size_t i = 0; i <= e.length; ++i)
            s.name[i] = e.name[i];
        const hnsw::Params& p = e.collection->index.params();
        s.metric = static_cast<uint8_t>(p.metric);
        s.durable = e.collection->durable ? 1 : 0;
        s.replicated = e.collection->replicated ? 1 : 0;
        s.dim = p.dim;
        s.m = p.m;
        s.ef_construction = p.ef_construction;
        s.max_elements = p.max_elements;
        s.count = static_cast<uint32_t>(e.collection->index.size());
        s.bytes_budget = 4096ull << e.collection->order;
        if (e.collection->documents) { // (its own index: `index` is empty)
            const text::DocumentIndex& d = e.collection->docs;
            s.documents = 1;
            s.metric = static_cast<uint8_t>(hnsw::Metric::Cosine);
            s.dim = d.semantic() ? embedder::dim() : 0;
            s.m = s.ef_construction = 0;
            s.max_elements = d.params().max_docs;
            s.count = d.documents().count();
        }
    }
    return n;
}

Collection* idle_with_unlinked() {
    const uint64_t now = clock::monotonic_ns();
    for (auto& e : g_named) {
        Collection* c = e.collection;
        if (c && c->outstanding == 0 && !c->writer && c->readers == 0 && !c->linking_stopped &&
            now >= c->link_paused_until_ns && c->index.deferred() > 0)
            return c;
    }
    return nullptr;
}

void checkpoint_cut() {
    for (auto& e : g_named)
        if (e.collection && e.collection->awaiting_checkpoint)
            e.collection->in_checkpoint = true;
}

void checkpoint_end(bool written) {
    for (auto& e : g_named) {
        Collection* c = e.collection;
        if (!c || !c->in_checkpoint)
            continue;
        c->in_checkpoint = false;
        c->awaiting_checkpoint = false;
        if (!written)
            c->durable = false;
    }
}

} // namespace vector

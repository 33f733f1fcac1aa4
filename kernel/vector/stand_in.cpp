#include "stand_in.h"

#include "../cap/kcap.h"
#include "../mm/kheap.h"
#include "collection.h"

#include <hnsw/limits.h>

#include <new>

namespace vector::stand_in {
namespace {

struct Slot {
    uint64_t object_id = 0; // 0: free
    Collection* collection = nullptr;
    uint64_t used = 0;
};
Slot g_slots[kMaxStandIns];
uint64_t g_uses = 0;

bool same_name(const Collection& c, std::string_view name) { return std::string_view(c.name, c.name_length) == name; }

// Its capabilities die first, so nothing reaches the object as it goes (a stand-in has no
// requests of its own: its changes are copied to the desk before the caller blocks).
void release(Slot& s) {
    (void)kcap::destroy_object(s.object_id);
    s.collection->~Collection();
    kheap::free(s.collection);
    s = Slot {};
}

} // namespace

ktl::Result<uint64_t> obtain(std::string_view name, uint32_t dim) {
    if (name.empty() || name.size() >= sizeof(Collection::name) || dim == 0 || dim > hnsw::kMaxDim)
        return ktl::Error::InvalidArgs;
    Slot* free_slot = nullptr;
    Slot* oldest = &g_slots[0];
    for (Slot& s : g_slots) {
        if (s.object_id && same_name(*s.collection, name)) {
            if (s.collection->stand_in_dim == dim) {
                s.used = ++g_uses;
                return s.object_id;
            }
            release(s); // (dropped and created again elsewhere with another dimension)
        }
        if (!s.object_id && !free_slot)
            free_slot = &s;
        if (s.used < oldest->used)
            oldest = &s;
    }
    if (!free_slot) {
        release(*oldest);
        free_slot = oldest;
    }
    auto mem = kheap::alloc_for(kheap::Owner::Store, sizeof(Collection));
    if (!mem)
        return mem.error();
    auto* c = new (*mem) Collection {};
    c->stand_in = true;
    c->stand_in_dim = dim;
    c->replicated = true; // (its changes go to the desk: handlers_vector.cpp)
    c->name_length = static_cast<uint8_t>(name.size());
    for (size_t i = 0; i < name.size(); ++i)
        c->name[i] = name[i];
    auto id = kcap::register_object(kcap::ObjectType::VectorCollection, c);
    if (!id) {
        c->~Collection();
        kheap::free(c);
        return id.error();
    }
    *free_slot = Slot { *id, c, ++g_uses };
    return *id;
}

} // namespace vector::stand_in

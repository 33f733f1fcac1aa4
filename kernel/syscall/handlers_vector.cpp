// Vector-store system calls. Callers are checked here (capability, arguments, buffers); the
// index work itself is queued to the worker tasks (vector/service.h).
#include "../mm/kheap.h"
#include "../mm/pmm.h"
#include "../sched/scheduler.h"
#include "../vector/service.h"
#include "buffers.h"
#include "handlers.h"
#include "vector_alloc.h"

#include <new>

namespace handlers {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
int64_t finish_outcome(ipc::Outcome o) { return o.blocked ? kBlocked : o.value; }
vector::Collection& collection(const kcap::Resolved& o) { return *static_cast<vector::Collection*>(o.object); }

} // namespace

// Pages for an index arena of `bytes`, within the per-collection budget, charged to the store
// (a collection outlives the call that made it).
ktl::Result<IndexPages> alloc_index_pages(size_t bytes) {
    if (bytes > vector::kMaxCollectionBytes)
        return ktl::Error::NoMemory;
    const unsigned order = pmm::order_for(bytes);
    auto pages = TRY(pmm::alloc_pages(order, static_cast<uint16_t>(kheap::Owner::Store)));
    return IndexPages { pages, order };
}

ktl::Result<vector::Collection*> make_collection(ktl::Result<hnsw::Index>&& index, IndexPages pages) {
    auto mem = index ? kheap::alloc_for(kheap::Owner::Store, sizeof(vector::Collection))
                     : ktl::Result<void*>(index.error());
    if (!mem) {
        pmm::free_pages(pages.addr, pages.order);
        return mem.error();
    }
    auto* c = new (*mem) vector::Collection {};
    c->index = static_cast<hnsw::Index&&>(*index);
    c->pages = pages.addr;
    c->order = pages.order;
    static uint64_t serials = 0;
    c->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    return c;
}

namespace {

// Wraps a freshly created or loaded index into a collection object and gives `owner` the
// original capability; on any failure everything is released again.
int64_t publish(ktl::Result<vector::Collection*> made, sched::Task* owner) {
    if (!made)
        return err(made.error());
    vector::Collection* c = *made;
    auto slot = kcap::create_and_grant(owner, kcap::ObjectType::VectorCollection, c,
                                       kcap::kRead | kcap::kWrite | kcap::kGrant | kcap::kRevoke);
    if (!slot) {
        destroy_collection(c);
        return err(slot.error());
    }
    return *slot;
}

} // namespace

void destroy_collection(void* object) {
    auto* c = static_cast<vector::Collection*>(object);
    pmm::free_pages(c->pages, c->order);
    c->~Collection();
    kheap::free(c);
}

ktl::Result<hnsw::Params> create_params(uint64_t ptr) {
    if (!buffers::readable(ptr, sizeof(vector::CreateParams)))
        return ktl::Error::InvalidArgs;
    const auto in = *reinterpret_cast<const vector::CreateParams*>(ptr);
    hnsw::Params p;
    p.dim = in.dim;
    p.metric = static_cast<hnsw::Metric>(in.metric);
    p.m = in.m ? in.m : 16;
    p.ef_construction = in.ef_construction ? in.ef_construction : 200;
    p.max_ef = in.max_ef ? in.max_ef : 512;
    p.max_elements = in.max_elements;
    if (in.metric > 2 || !p.validate())
        return ktl::Error::InvalidArgs;
    return p;
}

int64_t vec_create(arch::TrapFrame& f, const kcap::Resolved&) {
    auto params = create_params(f.x[1]);
    if (!params)
        return err(params.error());
    const hnsw::Params& p = *params;
    auto pages = alloc_index_pages(hnsw::Index::memory_needed(p));
    if (!pages)
        return err(pages.error());
    return publish(make_collection(hnsw::Index::create(p, pages->span()), *pages), sched::current());
}

int64_t vec_insert(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t count = f.x[3];
    uint32_t dim = collection(o).index.params().dim;
    if (count == 0 || count > 4096 || !buffers::readable(f.x[1], count * 8) ||
        !buffers::readable(f.x[2], count * dim * sizeof(float)))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Insert, &collection(o), { f.x[1], f.x[2], count, f.x[4], 0 }));
}

// The optional id filter (a5) is a strictly ascending list, so the workers can binary-search it;
// anything else is refused here rather than trusted.
int64_t vec_search(arch::TrapFrame& f, const kcap::Resolved& o) {
    const hnsw::Params& p = collection(o).index.params();
    uint64_t k = f.x[2], ef = f.x[3];
    if (k == 0 || k > p.max_ef || ef > p.max_ef || !buffers::readable(f.x[1], p.dim * sizeof(float)) ||
        !buffers::writable(f.x[4], k * sizeof(hnsw::Hit)))
        return err(ktl::Error::InvalidArgs);
    uint64_t ids = 0, count = 0;
    if (f.x[5] != 0) {
        if (!buffers::readable(f.x[5], sizeof(vector::SearchFilter)))
            return err(ktl::Error::InvalidArgs);
        const auto filter = *reinterpret_cast<const vector::SearchFilter*>(f.x[5]);
        ids = filter.ids;
        count = filter.count;
        if (count > vector::kMaxFilterIds || (count > 0 && !buffers::readable(ids, count * sizeof(uint64_t))))
            return err(ktl::Error::InvalidArgs);
        const auto* list = reinterpret_cast<const uint64_t*>(ids);
        for (uint64_t i = 1; i < count; ++i)
            if (list[i] <= list[i - 1])
                return err(ktl::Error::InvalidArgs);
    }
    // A filter with no ids accepts nothing: the search is answered empty without the worker.
    if (f.x[5] != 0 && count == 0)
        return 0;
    return finish_outcome(vector::submit(vector::Op::Search, &collection(o), { f.x[1], k, ef | (count << 32), f.x[4], ids }));
}

int64_t vec_get(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (!buffers::writable(f.x[2], collection(o).index.params().dim * sizeof(float)) ||
        (f.x[3] != 0 && !buffers::writable(f.x[3], sizeof(uint64_t))))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Get, &collection(o), { f.x[1], f.x[2], f.x[3], 0, 0 }));
}

int64_t vec_delete(arch::TrapFrame& f, const kcap::Resolved& o) {
    const uint64_t count = f.x[2];
    if (count > 0 && (count > vector::kMaxDeleteIds || !buffers::readable(f.x[1], count * sizeof(uint64_t)) ||
                      !buffers::writable(f.x[3], count)))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Delete, &collection(o), { f.x[1], count, f.x[3], 0, 0 }));
}

int64_t vec_stats(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (!buffers::writable(f.x[1], sizeof(vector::Stats)))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Stats, &collection(o), { f.x[1], 0, 0, 0, 0 }));
}

int64_t vec_export(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (f.x[1] != 0 && !buffers::writable(f.x[1], f.x[2], vector::kMaxCollectionBytes))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Export, &collection(o), { f.x[1], f.x[2], f.x[3], 0, 0 }));
}

namespace {

// vec_import's Load ends here, in the worker's vec_serve: the caller gets the collection.
int64_t grant_loaded(const vector::Job&, int64_t result, sched::Task* caller) {
    vector::Collection* c = loaded(result);
    if (!c)
        return result;
    if (abandoned(caller)) {
        destroy_collection(c);
        return err(ktl::Error::TimedOut);
    }
    return publish(c, caller);
}

} // namespace

int64_t vec_import(arch::TrapFrame& f, const kcap::Resolved&) { return submit_load(f.x[1], f.x[2], f.x[3], grant_loaded); }

int64_t submit_load(uint64_t ptr, uint64_t len, uint64_t capacity, vector::Finish finish, uint64_t a3, uint64_t a4) {
    if (!buffers::readable(ptr, len, vector::kMaxCollectionBytes) || capacity > hnsw::kMaxElements)
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Load, nullptr, { ptr, len, capacity, a3, a4 }, finish));
}

ktl::Result<vector::Collection*> load_collection(std::span<const std::byte> snapshot, uint32_t capacity) {
    auto params = TRY(hnsw::Index::load_params(snapshot, capacity));
    auto pages = TRY(alloc_index_pages(hnsw::Index::memory_needed(params)));
    return make_collection(hnsw::Index::load(snapshot, pages.span(), capacity), pages);
}

int64_t vec_serve(arch::TrapFrame& f, const kcap::Resolved&) {
    if (!buffers::writable(f.x[3], sizeof(vector::Job)))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::serve(f.x[1], static_cast<int64_t>(f.x[2]), reinterpret_cast<vector::Job*>(f.x[3])));
}

} // namespace handlers

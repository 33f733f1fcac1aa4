// Vector-store system calls. Callers are checked here (capability, arguments, buffers); the
// index work itself is queued to the worker tasks (vector/service.h).
#include "../vector/replication_desk.h"

#include "../bootargs.h"
#include "../clock.h"
#include "../mm/kheap.h"
#include "../mm/pmm.h"
#include "../sched/scheduler.h"
#include "../vector/documents.h"
#include "../vector/durability.h"
#include "../vector/service.h"
#include "buffers.h"
#include "handlers.h"
#include "vector_alloc.h"

#include <new>

#include <text/doc_batch.h>

namespace handlers {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
int64_t finish_outcome(ipc::Outcome o) { return o.blocked ? kBlocked : o.value; }
vector::Collection& collection(const kcap::Resolved& o) { return *static_cast<vector::Collection*>(o.object); }
// A change to a replicated collection made by anyone but the consensus group's applier (or the
// storage task putting back what this node applied): it goes to the group (kernel/vector/
// replication_desk.h) instead of into the index here.
// A stand-in's vectors' dimension is its own (it has no index).
uint32_t dim_of(const vector::Collection& c) { return c.stand_in ? c.stand_in_dim : c.index.params().dim; }
int64_t elsewhere() { return err(ktl::Error::Elsewhere); } // reads of a stand-in (stand_in.h)
// A document collection is reached through doc_* (handlers_documents.cpp), not as vectors.
bool documents(const kcap::Resolved& o) { return collection(o).documents; }
int64_t wrong_kind() { return err(ktl::Error::WrongType); }
bool replicated_elsewhere(const kcap::Resolved& o) {
    return collection(o).replicated && !replication::is_applier(sched::current()) && !vector::durability::replaying();
}
// The applier changing one of this node's own collections (a name the group shares with it).
bool foreign_to_applier(const kcap::Resolved& o) {
    return !collection(o).replicated && replication::is_applier(sched::current());
}

} // namespace

// Pages for an index arena of `bytes`, within the per-collection budget, charged to the store
// (a collection outlives the call that made it).
ktl::Result<IndexPages> alloc_index_pages(size_t bytes, uint64_t budget) {
    if (bytes > budget)
        return ktl::Error::NoMemory;
    const unsigned order = pmm::order_for(bytes);
    auto pages = TRY(pmm::alloc_pages(order, static_cast<uint16_t>(kheap::Owner::Store)));
    return IndexPages { pages, order };
}

ktl::Result<vector::Collection*> new_collection(IndexPages pages) {
    auto mem = kheap::alloc_for(kheap::Owner::Store, sizeof(vector::Collection));
    if (!mem) {
        pmm::free_pages(pages.addr, pages.order);
        return mem.error();
    }
    auto* c = new (*mem) vector::Collection {};
    c->pages = pages.addr;
    c->order = pages.order;
    static uint64_t serials = 0;
    c->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    return c;
}

ktl::Result<vector::Collection*> make_collection(ktl::Result<hnsw::Index>&& index, IndexPages pages) {
    if (!index) {
        pmm::free_pages(pages.addr, pages.order);
        return index.error();
    }
    vector::Collection* c = TRY(new_collection(pages));
    c->index = static_cast<hnsw::Index&&>(*index);
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
    if (c->pages) // (a stand-in has none)
        pmm::free_pages(c->pages, c->order);
    c->~Collection();
    kheap::free(c);
}

ktl::Result<hnsw::Params> create_params(const vector::CreateParams* ptr) {
    if (!buffers::readable(ptr, sizeof(vector::CreateParams)))
        return ktl::Error::InvalidArgs;
    const auto in = *ptr;
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

int64_t vec_create(const kcap::Resolved&, Cap, const vector::CreateParams* in) {
    auto params = create_params(in);
    if (!params)
        return err(params.error());
    const hnsw::Params& p = *params;
    auto pages = alloc_index_pages(hnsw::Index::memory_needed(p));
    if (!pages)
        return err(pages.error());
    return publish(make_collection(hnsw::Index::create(p, pages->span()), *pages), sched::current());
}

int64_t vec_insert(const kcap::Resolved& o, Cap, const uint64_t* ids, const float* vectors, uint64_t count,
                   uint64_t provenance) {
    if (documents(o))
        return wrong_kind();
    uint32_t dim = dim_of(collection(o));
    if (count == 0 || count > 4096 || !buffers::readable(ids, count * 8) ||
        !buffers::readable(vectors, count * dim * sizeof(float)))
        return err(ktl::Error::InvalidArgs);
    if (foreign_to_applier(o))
        return err(ktl::Error::WrongType);
    if (replicated_elsewhere(o)) {
        const vector::Collection& c = collection(o);
        const std::string_view name(c.name, c.name_length);
        const size_t bytes = storage::upsert_record_bytes(dim, count);
        return finish(replication::submit(storage::RecordType::Upsert, bytes, [&](std::span<std::byte> out) {
            return static_cast<bool>(
                storage::encode_upsert(out, name, dim, static_cast<uint32_t>(count), provenance, ids, vectors));
        }));
    }
    // Recovery's replay stores the log's vectors without the graph work: the store serves once
    // they are back, and the service links them in the background (service.h, Op::Link).
    const uint64_t defer = vector::durability::replaying() && !bootargs::get().recovery_links_inline
                               ? vector::kInsertDeferLinks
                               : 0;
    const uint64_t args[5] = { buffers::address(ids), buffers::address(vectors), count, provenance, defer };
    return finish_outcome(vector::submit(vector::Op::Insert, &collection(o), args));
}

// The optional id filter (a5) is a strictly ascending list, so the workers can binary-search it;
// anything else is refused here rather than trusted.
int64_t vec_search(const kcap::Resolved& o, Cap, const float* query, uint64_t k, uint64_t ef, hnsw::Hit* out,
                   const vector::SearchFilter* filter_ptr) {
    if (documents(o))
        return wrong_kind();
    if (collection(o).stand_in)
        return elsewhere();
    const hnsw::Params& p = collection(o).index.params();
    if (k == 0 || k > p.max_ef || ef > p.max_ef || !buffers::readable(query, p.dim * sizeof(float)) ||
        !buffers::writable(out, k * sizeof(hnsw::Hit)))
        return err(ktl::Error::InvalidArgs);
    uint64_t ids = 0, count = 0;
    if (filter_ptr) {
        if (!buffers::readable(filter_ptr, sizeof(vector::SearchFilter)))
            return err(ktl::Error::InvalidArgs);
        const auto filter = *filter_ptr;
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
    if (filter_ptr && count == 0)
        return 0;
    const uint64_t args[5] = { buffers::address(query), k, ef | (count << 32), buffers::address(out), ids };
    return finish_outcome(vector::submit(vector::Op::Search, &collection(o), args));
}

int64_t vec_get(const kcap::Resolved& o, Cap, uint64_t id, float* out, uint64_t* provenance) {
    if (documents(o))
        return wrong_kind();
    if (collection(o).stand_in)
        return elsewhere();
    if (!buffers::writable(out, collection(o).index.params().dim * sizeof(float)) ||
        (provenance && !buffers::writable(provenance, sizeof(uint64_t))))
        return err(ktl::Error::InvalidArgs);
    const uint64_t args[5] = { id, buffers::address(out), buffers::address(provenance), 0, 0 };
    return finish_outcome(vector::submit(vector::Op::Get, &collection(o), args));
}

int64_t vec_delete(const kcap::Resolved& o, Cap, uint64_t id_or_ids, uint64_t count, bool* absent) {
    if (documents(o))
        return wrong_kind();
    if (count > 0 && (count > vector::kMaxDeleteIds || !buffers::readable(id_or_ids, count * sizeof(uint64_t)) ||
                      !buffers::writable(absent, count)))
        return err(ktl::Error::InvalidArgs);
    if (foreign_to_applier(o))
        return err(ktl::Error::WrongType);
    if (replicated_elsewhere(o)) {
        // The voters delete; this node's applier says which ids it did not find (into `absent`).
        const vector::Collection& c = collection(o);
        const std::string_view name(c.name, c.name_length);
        const uint64_t n = count == 0 ? 1 : count;
        const uint64_t* ids = count == 0 ? &id_or_ids : reinterpret_cast<const uint64_t*>(id_or_ids);
        for (uint64_t i = 0; i < count; ++i)
            absent[i] = false;
        return finish(replication::submit(
            storage::RecordType::Delete, storage::delete_record_bytes(n),
            [&](std::span<std::byte> out) {
            return static_cast<bool>(storage::encode_delete(out, name, ids, static_cast<uint32_t>(n)));
            },
            replication::DeleteAnswer { absent, static_cast<uint32_t>(count), count == 0 }));
    }
    const uint64_t args[5] = { id_or_ids, count, buffers::address(absent), 0, 0 };
    return finish_outcome(vector::submit(vector::Op::Delete, &collection(o), args));
}

// A linearizable read of a replicated collection: a no-op command through the group's log,
// answered once this node applied it (so every change committed before the call is applied here).
int64_t vec_sync(const kcap::Resolved& o, Cap) {
    const vector::Collection& c = collection(o);
    if (c.stand_in)
        return elsewhere();
    if (!c.replicated)
        return 0;
    if (replication::is_applier(sched::current()) || vector::durability::replaying())
        return 1;
    const std::string_view name(c.name, c.name_length);
    // (The applier answers the barrier 1 once it applied it.)
    return finish(replication::read_barrier(name));
}

int64_t vec_stats(const kcap::Resolved& o, Cap, vector::Stats* out) {
    if (!buffers::writable(out, sizeof(vector::Stats)))
        return err(ktl::Error::InvalidArgs);
    if (collection(o).stand_in) {
        vector::Stats st {};
        st.dim = collection(o).stand_in_dim;
        st.replicated = abi::kStatsElsewhere;
        *out = st;
        return 0;
    }
    const uint64_t args[5] = { buffers::address(out), 0, 0, 0, 0 };
    return finish_outcome(vector::submit(vector::Op::Stats, &collection(o), args));
}

// How long an export call keeps background linking off its collection (renewed by every page).
constexpr uint64_t kExportLinkPauseNs = 5'000'000'000ull;

int64_t vec_export(const kcap::Resolved& o, Cap, void* out, uint64_t length, uint64_t offset) {
    if (out && !buffers::writable(out, length, abi::kMaxDocumentCollectionBytes))
        return err(ktl::Error::InvalidArgs);
    if (collection(o).stand_in)
        return elsewhere();
    // Background linking (after a boot with data) rewrites the graph's pages: it starts no slice
    // on a collection being exported, so a client's pages, asked for one after another, belong to
    // one snapshot. A slice already running ends before this export runs (it writes; this reads).
    collection(o).link_paused_until_ns = clock::monotonic_ns() + kExportLinkPauseNs;
    const uint64_t args[5] = { buffers::address(out), length, offset, 0, 0 };
    return finish_outcome(vector::submit(vector::Op::Export, &collection(o), args));
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

int64_t vec_import(const kcap::Resolved&, Cap, const void* snapshot, uint64_t length, uint64_t capacity) {
    return submit_load(buffers::address(snapshot), length, capacity, grant_loaded);
}

int64_t submit_load(uint64_t ptr, uint64_t len, uint64_t capacity, vector::Finish finish, uint64_t a3, uint64_t a4) {
    // (A documents snapshot may be as large as its collection's pages: the larger budget.)
    if (!buffers::readable(ptr, len, abi::kMaxDocumentCollectionBytes + (1u << 20)) || capacity > hnsw::kMaxElements)
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::submit(vector::Op::Load, nullptr, { ptr, len, capacity, a3, a4 }, finish));
}

ktl::Result<vector::Collection*> load_collection(std::span<const std::byte> snapshot, uint32_t capacity) {
    if (text::is_snapshot(snapshot))
        return vector::documents::load(snapshot, capacity);
    auto params = TRY(hnsw::Index::load_params(snapshot, capacity));
    auto pages = TRY(alloc_index_pages(hnsw::Index::memory_needed(params)));
    return make_collection(hnsw::Index::load(snapshot, pages.span(), capacity), pages);
}

int64_t vec_serve(const kcap::Resolved&, Cap, uint64_t done, int64_t result, vector::Job* next) {
    if (!buffers::writable(next, sizeof(vector::Job)))
        return err(ktl::Error::InvalidArgs);
    return finish_outcome(vector::serve(done, result, next));
}

} // namespace handlers

// The named vector store's system calls. The store hands out no standing capabilities of its
// own accord: create keeps the collection, open gives one capability to one collection and only
// to a holder of Grant on the store (the MCP bridge, which turns it into a single-use token for
// a tool task), list reads, drop destroys, import loads a checked snapshot under a new name.
#include "../arch/aarch64/cpu.h"
#include "../cap/kcap.h"
#include "../sched/scheduler.h"
#include "../vector/store.h"
#include "buffers.h"
#include "handlers.h"
#include "vector_alloc.h"

namespace handlers {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

// The name from a caller's buffer, checked against the store's naming rule.
ktl::Result<std::string_view> name_arg(uint64_t ptr, uint64_t len) {
    if (len == 0 || len > vector::kMaxNameLength || !buffers::readable(ptr, len, vector::kMaxNameLength))
        return ktl::Error::InvalidArgs;
    std::string_view name(reinterpret_cast<const char*>(ptr), len);
    if (!vector::valid_name(name))
        return ktl::Error::InvalidArgs;
    return name;
}

} // namespace

namespace {

// Registers a created or loaded collection under `name`; on failure everything is released.
int64_t keep(std::string_view name, ktl::Result<vector::Collection*> made) {
    if (!made)
        return err(made.error());
    // A kernel object nobody holds a capability to yet: the store is its owner.
    auto id = kcap::register_object(kcap::ObjectType::VectorCollection, *made);
    if (!id) {
        destroy_collection(*made);
        return err(id.error());
    }
    arch::IrqGuard guard; // add() re-checks the name: another create may have won meanwhile
    auto entry = vector::add(name, *id, *made);
    if (!entry) {
        (void)kcap::destroy_object(*id);
        destroy_collection(*made);
        return err(entry.error());
    }
    return 0;
}

} // namespace

int64_t store_create(arch::TrapFrame& f, const kcap::Resolved&) {
    auto name = name_arg(f.x[1], f.x[2]);
    if (!name)
        return err(name.error());
    auto params = create_params(f.x[3]);
    if (!params)
        return err(params.error());
    if (vector::find(*name))
        return err(ktl::Error::Exists); // before any memory is taken
    auto pages = alloc_index_pages(hnsw::Index::memory_needed(*params));
    if (!pages)
        return err(pages.error());
    return keep(*name, make_collection(hnsw::Index::create(*params, pages->span()), *pages));
}

// The snapshot is checked (CRCs, structure, parameters) by load() before anything is kept.
int64_t store_import(arch::TrapFrame& f, const kcap::Resolved&) {
    auto name = name_arg(f.x[1], f.x[2]);
    if (!name)
        return err(name.error());
    if (vector::find(*name))
        return err(ktl::Error::Exists);
    return keep(*name, load_collection(f.x[3], f.x[4]));
}

int64_t store_open(arch::TrapFrame& f, const kcap::Resolved& store) {
    auto name = name_arg(f.x[1], f.x[2]);
    if (!name)
        return err(name.error());
    uint32_t rights = static_cast<uint32_t>(f.x[3]);
    constexpr uint32_t kOpenable = kcap::kRead | kcap::kWrite | kcap::kGrant;
    if (rights == 0 || (rights & ~kOpenable) != 0)
        return err(ktl::Error::InvalidArgs); // never Revoke: only the store destroys collections
    if ((rights & store.rights) != rights)
        return err(ktl::Error::AccessDenied); // a collection is opened with no more than the store is held
    arch::IrqGuard guard; // the store's table is shared by every caller
    vector::Named* entry = vector::find(*name);
    if (!entry)
        return err(ktl::Error::NotFound);
    auto slot = kcap::grant_existing(sched::current(), entry->object_id, rights);
    return slot ? static_cast<int64_t>(*slot) : err(slot.error());
}

int64_t store_list(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t max = f.x[2];
    if (max == 0 || max > vector::kMaxNamed || !buffers::writable(f.x[1], max * sizeof(vector::StoreEntry)))
        return err(ktl::Error::InvalidArgs);
    arch::IrqGuard guard;
    return vector::list(reinterpret_cast<vector::StoreEntry*>(f.x[1]), static_cast<uint32_t>(max));
}

int64_t store_drop(arch::TrapFrame& f, const kcap::Resolved&) {
    auto name = name_arg(f.x[1], f.x[2]);
    if (!name)
        return err(name.error());
    arch::IrqGuard guard; // no request may be queued between the idle check and the destroy
    vector::Named* entry = vector::find(*name);
    if (!entry)
        return err(ktl::Error::NotFound);
    vector::Collection* c = entry->collection;
    if (c->outstanding > 0)
        return err(ktl::Error::WouldBlock); // requests still queued or running on it
    // Every capability dies first (tool tasks holding one included), then the memory goes.
    if (auto r = kcap::destroy_object(entry->object_id); !r)
        return err(r.error());
    vector::remove(entry);
    destroy_collection(c);
    return 0;
}

} // namespace handlers

// The named vector store's system calls. The store hands out no standing capabilities of its
// own accord: create keeps the collection, open gives one capability to one collection and only
// to a holder of Grant on the store (the MCP bridge, which turns it into a single-use token for
// a tool task), list reads, drop destroys, import loads a checked snapshot under a new name.
#include "../arch/aarch64/cpu.h"
#include "../cap/kcap.h"
#include "../bootargs.h"
#include "../clock.h"
#include "../cluster/consensus.h"
#include "../vector/replication_desk.h"
#include "../mm/kheap.h"
#include "../mm/pmm.h"
#include "../sched/scheduler.h"
#include "../storage/journal.h"
#include "../vector/documents.h"
#include "../vector/stand_in.h"
#include "../vector/store.h"
#include "buffers.h"
#include "handlers.h"
#include "vector_alloc.h"

#include <hnsw/crc32.h>

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

// A name this node holds no collection of: a replicated collection whose voters are other nodes
// says so (its caller can be told where to go); the group's own task only ever meets NotFound.
ktl::Error missing(std::string_view name) {
    return !replication::is_applier(sched::current()) && clusterd::consensus::placed_elsewhere(name)
               ? ktl::Error::Elsewhere
               : ktl::Error::NotFound;
}
ktl::Result<std::string_view> name_arg(const char* ptr, uint64_t len) { return name_arg(buffers::address(ptr), len); }

} // namespace

namespace {

// Registers a created or loaded collection under `name`; on failure everything is released.
// durable: its changes are logged (journal.h).
int64_t keep(std::string_view name, ktl::Result<vector::Collection*> made, bool durable = false,
             bool replicated = false) {
    if (!made)
        return err(made.error());
    (*made)->durable = durable;
    (*made)->replicated = replicated;
    (*made)->name_length = static_cast<uint8_t>(name.size());
    for (size_t i = 0; i < name.size(); ++i)
        (*made)->name[i] = name[i];
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

// While the storage task recovers the store from the disk it is its alone: anyone else is told so
// (the bridges serve meanwhile; their vector tools answer `recovering`).
bool recovering() { return journal::state() == journal::State::Recovering && !journal::replaying(); }

// Stages the record of a create or drop that was reserved (`bytes`) and blocks the caller until it
// is durable (a caller with abi::kTaskAckStaged: until it is staged); a journal that failed
// meanwhile answers -IoError at once.
template <typename Encode>
int64_t log_and_wait(storage::RecordType type, size_t bytes, int64_t result, Encode&& encode) {
    uint64_t ticket = 0;
    const bool by_bridge = sched::current()->ack_staged; // its creator syncs before answering (abi::kTaskAckStaged)
    std::span<std::byte> out = journal::stage(type, bytes, bytes, ticket, by_bridge);
    if (out.empty() || !encode(out))
        return err(ktl::Error::IoError);
    if (by_bridge)
        return result;
    return finish(journal::wait(ticket, result));
}

namespace {

// A document collection (abi::kCreateDocuments): max_elements documents, in memory only or logged
// like a vector collection. Not replicated yet (docs/documents.md).
int64_t create_documents(std::string_view name, const vector::CreateParams in) {
    if ((in.flags & ~(vector::kCreateDocuments | vector::kCreateMemoryOnly)) != 0 || in.max_elements == 0 ||
        in.max_elements > (1u << 20) || (in.m != 0 && (in.m < 64 || in.m > 65536)))
        return err(ktl::Error::InvalidArgs);
    if (replication::is_applier(sched::current()))
        return err(ktl::Error::WrongType);
    const bool memory_only = (in.flags & vector::kCreateMemoryOnly) != 0;
    if (!memory_only && journal::state() == journal::State::Failed)
        return err(ktl::Error::IoError);
    const bool durable = !memory_only && journal::durable_by_default();
    const bool logged = durable && !journal::replaying();
    if (vector::find(name))
        return err(ktl::Error::Exists);
    if (logged) {
        if (ktl::Error e = journal::reserve(storage::kCreateRecordBytes); e != ktl::Error::None)
            return err(e);
    }
    const int64_t kept = keep(name, vector::documents::create(in.max_elements, in.m), durable);
    if (!logged)
        return kept < 0 ? kept : (durable ? 1 : 0);
    if (kept < 0) {
        journal::unreserve(storage::kCreateRecordBytes);
        return kept;
    }
    const storage::CreateRecord rec { 0, in.metric, in.m, 0, in.max_elements, 0, in.flags };
    return log_and_wait(storage::RecordType::Create, storage::kCreateRecordBytes, 1, [&](std::span<std::byte> out) {
        return static_cast<bool>(storage::encode_create(out, name, rec));
    });
}

} // namespace

int64_t store_create(const kcap::Resolved&, Cap, const char* name_ptr, uint64_t name_len,
                     const vector::CreateParams* params_ptr) {
    if (recovering())
        return err(ktl::Error::NotReady);
    auto name = name_arg(name_ptr, name_len);
    if (!name)
        return err(name.error());
    if (!buffers::readable(params_ptr, sizeof(vector::CreateParams)))
        return err(ktl::Error::InvalidArgs);
    if (params_ptr->flags & vector::kCreateDocuments)
        return create_documents(*name, *params_ptr);
    auto params = create_params(params_ptr);
    if (!params)
        return err(params.error());
    const uint32_t flags = params_ptr->flags;
    if (flags & ~(vector::kCreateMemoryOnly | vector::kCreateReplicated | vector::kCreateReplicasMask))
        return err(ktl::Error::InvalidArgs);
    const bool memory_only = (flags & vector::kCreateMemoryOnly) != 0;
    const bool replicated = (flags & vector::kCreateReplicated) != 0;
    const uint32_t replicas = (flags & vector::kCreateReplicasMask) >> vector::kCreateReplicasShift;
    if (replicated != (replicas != 0) || (replicated && memory_only))
        return err(ktl::Error::InvalidArgs); // a replica keeps what the group committed
    // (The applier creates what the group committed, also on a newcomer not yet a voter.)
    // A group of its own names as many live members as asked (the creating node chooses them, in
    // group 0 or not: too few is refused then); in group 0 itself (raft_groups=0), all of group
    // 0's voters, created at one of them.
    const bool groups = bootargs::get().raft_groups != 0;
    if (replicated && !journal::replaying() && !replication::is_applier(sched::current()) &&
        (!replication::has_applier() || (!groups && replicas != replication::voters())))
        return err(!replication::has_applier() || replication::voters() == 0 ? ktl::Error::NotReady
                                                                             : ktl::Error::OutOfRange);
    if (replicated && !replication::is_applier(sched::current()) && !journal::replaying()) {
        // Created on every voter by the group's applier; the caller waits for this node's.
        if (vector::find(*name))
            return err(ktl::Error::Exists);
        const storage::CreateRecord rec { params->dim,
                                          static_cast<uint32_t>(params->metric),
                                          params->m,
                                          params->ef_construction,
                                          params->max_elements,
                                          params->max_ef,
                                          flags };
        return finish(replication::submit(storage::RecordType::Create, storage::kCreateRecordBytes,
                                          [&](std::span<std::byte> out) {
            return static_cast<bool>(storage::encode_create(out, *name, rec));
        }));
    }
    if (!memory_only && journal::state() == journal::State::Failed)
        return err(ktl::Error::IoError); // a durable collection cannot be promised now
    const bool durable = !memory_only && journal::durable_by_default();
    const bool logged = durable && !journal::replaying();
    if (const vector::Named* there = vector::find(*name)) {
        // The applier creating a replicated collection again (a change applied again after a
        // restart) finds it done; never one of this node's own collections of the same name.
        if (replicated && there->collection->replicated && replication::is_applier(sched::current()))
            return 1;
        return err(ktl::Error::Exists); // before any memory is taken
    }
    if (logged) {
        if (ktl::Error e = journal::reserve(storage::kCreateRecordBytes); e != ktl::Error::None)
            return err(e == ktl::Error::WouldBlock ? ktl::Error::WouldBlock : e);
    }
    auto pages = alloc_index_pages(hnsw::Index::memory_needed(*params));
    int64_t kept = pages ? keep(*name, make_collection(hnsw::Index::create(*params, pages->span()), *pages), durable,
                                replicated)
                         : err(pages.error());
    if (!logged)
        return kept < 0 ? kept : (durable ? 1 : 0);
    if (kept < 0) {
        journal::unreserve(storage::kCreateRecordBytes);
        return kept;
    }
    const auto& in = *params_ptr;
    storage::CreateRecord rec { params->dim,
                                static_cast<uint32_t>(params->metric),
                                params->m,
                                params->ef_construction,
                                params->max_elements,
                                params->max_ef,
                                in.flags };
    return log_and_wait(storage::RecordType::Create, storage::kCreateRecordBytes, 1, [&](std::span<std::byte> out) {
        return static_cast<bool>(storage::encode_create(out, *name, rec));
    });
}

namespace {

// store_import's Load ends here, in the worker's vec_serve: the new collection is kept under the
// name (read again from the blocked caller's buffer, and checked again: memory is shared).
int64_t keep_loaded(const vector::Job& job, int64_t result, sched::Task* caller) {
    vector::Collection* c = loaded(result);
    if (!c)
        return result;
    auto name = name_arg(job.a[3], job.a[4]);
    if (!name || abandoned(caller)) {
        destroy_collection(c);
        return err(name ? ktl::Error::TimedOut : name.error());
    }
    // On a disk an import is durable through a checkpoint (its snapshot is no log record): its
    // writes wait for it, and so does its answer (vector/service.cpp takes the ticket).
    const bool replay = journal::replaying_for(caller);
    const bool on_disk = replay || journal::state() == journal::State::Ready;
    int64_t kept = keep(*name, c, on_disk);
    if (kept == 0 && on_disk && !replay) {
        c->awaiting_checkpoint = true;
        journal::note_import();
    }
    return kept < 0 ? kept : (on_disk ? 1 : 0);
}

} // namespace

// The snapshot is checked (CRCs, structure, parameters) by load(), in a vector worker, before
// anything is kept. a5: the capacity (0: sized by the content).
int64_t store_import(const kcap::Resolved&, Cap, const char* name_ptr, uint64_t name_len, const void* snapshot,
                     uint64_t len, uint64_t capacity) {
    if (recovering())
        return err(ktl::Error::NotReady);
    auto name = name_arg(name_ptr, name_len);
    if (!name)
        return err(name.error());
    if (vector::find(*name))
        return err(ktl::Error::Exists);
    return submit_load(buffers::address(snapshot), len, capacity, keep_loaded, buffers::address(name_ptr), name_len);
}

int64_t store_open(const kcap::Resolved& store, Cap, const char* name_ptr, uint64_t name_len, uint32_t rights) {
    if (recovering())
        return err(ktl::Error::NotReady);
    auto name = name_arg(name_ptr, name_len);
    if (!name)
        return err(name.error());
    constexpr uint32_t kOpenable = kcap::kRead | kcap::kWrite | kcap::kGrant;
    if (rights == 0 || (rights & ~kOpenable) != 0)
        return err(ktl::Error::InvalidArgs); // never Revoke: only the store destroys collections
    if ((rights & store.rights) != rights)
        return err(ktl::Error::AccessDenied); // a collection is opened with no more than the store is held
    arch::IrqGuard guard;                     // the store's table is shared by every caller
    vector::Named* entry = vector::find(*name);
    uint64_t object_id = entry ? entry->object_id : 0;
    if (!entry) {
        const ktl::Error why = missing(*name);
        // A caller that changes a collection other nodes hold changes it through a stand-in: the
        // cluster task carries its changes to the collection's voters (stand_in.h; its reads are
        // refused Elsewhere, but for its dimension).
        const uint32_t dim = why == ktl::Error::Elsewhere && (rights & kcap::kWrite) != 0
                                 ? clusterd::consensus::placed_elsewhere_dim(*name)
                                 : 0;
        auto stand_in = dim ? vector::stand_in::obtain(*name, dim) : ktl::Result<uint64_t>(why);
        if (!stand_in)
            return err(why);
        object_id = *stand_in;
    }
    auto slot = kcap::grant_existing(sched::current(), object_id, rights);
    return slot ? static_cast<int64_t>(*slot) : err(slot.error());
}

namespace {

// Imports in pieces: a snapshot larger than one message (the line's 1 MiB) is staged chunk by
// chunk in pages of the store's, then loaded as store_import loads a whole one. Two at a time;
// one idle for two minutes may be displaced by a new one.
constexpr uint32_t kStagings = 2;
constexpr uint64_t kStageIdleNs = 120'000'000'000ull;
// A snapshot never exceeds its index by more (a documents snapshot, its collection's pages).
constexpr uint64_t kMaxStaged = abi::kMaxDocumentCollectionBytes + (1u << 20);
static_assert(abi::kMaxDocumentCollectionBytes >= vector::kMaxCollectionBytes);

struct Staging {
    bool used = false;
    bool loading = false; // committed: a vector worker reads the pages until keep_staged
    char name[vector::kMaxNameLength + 1] = "";
    uint64_t total = 0, received = 0;
    uint64_t pages = 0;
    unsigned order = 0;
    uint32_t crc = 0;
    uint64_t touched_ns = 0;
    uint64_t provenance = 0; // committed: what the loaded vectors are stamped with
    bool replicated = false; // committed: a replicated collection put back from a checkpoint
};
Staging g_stagings[kStagings];

void release(Staging& st) {
    if (st.used)
        pmm::free_pages(st.pages, st.order);
    st = Staging {};
}

// The commit's Load ends here, in the worker's vec_serve: the collection is kept and the staged
// pages go back, whatever the outcome.
int64_t keep_staged(const vector::Job& job, int64_t result, sched::Task* caller) {
    uint64_t provenance = 0;
    bool replicated = false;
    for (auto& st : g_stagings)
        if (st.used && st.loading && st.pages == job.a[0]) {
            provenance = st.provenance;
            replicated = st.replicated;
            release(st);
        }
    // A snapshot's own claims about who wrote its vectors cannot be checked (anyone holding
    // vector:admin can write one): the vectors remember the import that stored them.
    // (Put back from a checkpoint, the vectors keep the nodes they were stored with.)
    // (Fetched by the group's applier, they keep them too: the same copy as on the other voters.)
    if (vector::Collection* c = loaded(result);
        c && !journal::replaying_for(caller) && !replication::is_applier(caller)) {
        if (c->documents)
            c->docs.retag(provenance);
        else
            c->index.retag(provenance);
    }
    int64_t kept = keep_loaded(job, result, caller);
    if (kept >= 0)
        loaded(result)->replicated = replicated && !loaded(result)->documents;
    // The commit answers the capacity the content was given (the store holds the collection now).
    if (kept < 0)
        return kept;
    const vector::Collection& c = *loaded(result);
    return c.documents ? c.docs.params().max_docs : c.index.params().max_elements;
}

Staging* staging_named(std::string_view name) {
    for (auto& st : g_stagings)
        if (st.used && name == st.name)
            return &st;
    return nullptr;
}

ktl::Result<Staging*> start_staging(std::string_view name, uint64_t total) {
    if (total == 0 || total > kMaxStaged)
        return ktl::Error::InvalidArgs;
    if (Staging* old = staging_named(name)) {
        if (old->loading)
            return ktl::Error::WouldBlock; // committed: being loaded right now
        release(*old);                     // offset 0 again: the import starts over
    }
    Staging* st = nullptr;
    uint64_t now = clock::monotonic_ns();
    for (auto& s : g_stagings)
        if (!s.used || (!s.loading && now - s.touched_ns > kStageIdleNs)) {
            st = &s;
            break;
        }
    if (!st)
        return ktl::Error::WouldBlock; // two imports in progress
    release(*st);
    const unsigned order = pmm::order_for(total);
    st->pages = TRY(pmm::alloc_pages(order, static_cast<uint16_t>(kheap::Owner::Store)));
    st->order = order;
    st->used = true;
    for (size_t i = 0; i < name.size(); ++i)
        st->name[i] = name[i];
    st->name[name.size()] = '\0';
    st->total = total;
    st->touched_ns = now;
    return st;
}

} // namespace

int64_t store_stage(const kcap::Resolved&, Cap, const char* name_ptr, uint64_t name_len,
                    vector::StageChunk* chunk_ptr) {
    if (recovering())
        return err(ktl::Error::NotReady);
    auto name = name_arg(name_ptr, name_len);
    if (!name)
        return err(name.error());
    if (!buffers::writable(chunk_ptr, sizeof(vector::StageChunk)))
        return err(ktl::Error::InvalidArgs);
    auto& chunk = *chunk_ptr;
    if (chunk.len > 0 && !buffers::readable(chunk.data, chunk.len, kMaxStaged))
        return err(ktl::Error::InvalidArgs);
    if (vector::find(*name))
        return err(ktl::Error::Exists);
    Staging* st = nullptr;
    {
        arch::IrqGuard guard; // both bridges' tool tasks share the table
        if (chunk.action == 0 && chunk.offset == 0) {
            auto started = start_staging(*name, chunk.total);
            if (!started)
                return err(started.error());
            st = *started;
        } else {
            st = staging_named(*name);
        }
        if (!st)
            return err(ktl::Error::NotFound);
        if (st->loading)
            return err(ktl::Error::WouldBlock); // committed: being loaded right now
        if (chunk.action == 2) {
            release(*st);
            return 0;
        }
        if (chunk.action == 0 && (chunk.offset != st->received || chunk.len > st->total - st->received))
            return err(ktl::Error::OutOfRange); // out of order or past the size: start over at 0
        st->touched_ns = clock::monotonic_ns();
    }
    if (chunk.action == 0) {
        auto* at = reinterpret_cast<uint8_t*>(st->pages) + st->received;
        const auto* src = reinterpret_cast<const uint8_t*>(chunk.data);
        for (uint64_t i = 0; i < chunk.len; ++i)
            at[i] = src[i];
        st->crc = hnsw::crc32(st->crc, at, chunk.len);
        st->received += chunk.len;
        chunk.crc_out = st->crc;
        chunk.received_out = st->received;
        return static_cast<int64_t>(st->received);
    }
    // Commit: all of it staged; loaded and checked whole by a vector worker before anything is
    // kept (keep_staged). chunk.capacity: 0 sizes the collection by its content.
    if (st->received != st->total)
        return err(ktl::Error::Truncated);
    arch::IrqGuard guard;
    st->loading = true;
    st->provenance = chunk.provenance;
    // Only the storage task puts a replicated collection back, and only the group's applier fetches
    // one from another voter (an import makes an ordinary one).
    st->replicated = (chunk.flags & vector::kCreateReplicated) != 0 &&
                     (journal::replaying() || replication::is_applier(sched::current()));
    int64_t rc = submit_load(st->pages, st->total, chunk.capacity, keep_staged, buffers::address(name_ptr), name_len);
    if (rc != kBlocked) // refused before the worker saw it
        release(*st);
    return rc;
}

// A name a caller looks up right after another voter created it: the barrier makes every change
// committed before the call visible here first (the applier answers it 1 once applied).
int64_t store_sync(const kcap::Resolved&, Cap, const char* name_ptr, uint64_t name_len) {
    auto name = name_arg(name_ptr, name_len);
    if (!name)
        return err(name.error());
    if (replication::voters() == 0 || replication::is_applier(sched::current()) || journal::replaying())
        return 0;
    // The caller (a bridge, before it grants a call) waits two seconds at most: -TimedOut then,
    // and it answers not_found as it would have. The barrier names the collection: placed in a
    // group of its own here, it goes on through that group (a group that has just started here
    // waits for its leader), so its create is applied when it answers.
    constexpr uint64_t kWaitNs = 2'000'000'000;
    return finish(replication::read_barrier(*name, clock::monotonic_ns() + kWaitNs));
}

int64_t store_list(const kcap::Resolved&, Cap, vector::StoreEntry* out, uint64_t max) {
    if (recovering())
        return err(ktl::Error::NotReady);
    if (max == 0 || max > vector::kMaxNamed || !buffers::writable(out, max * sizeof(vector::StoreEntry)))
        return err(ktl::Error::InvalidArgs);
    arch::IrqGuard guard;
    return vector::list(out, static_cast<uint32_t>(max));
}

int64_t store_drop(const kcap::Resolved&, Cap, const char* name_ptr, uint64_t name_len) {
    if (recovering())
        return err(ktl::Error::NotReady);
    auto name = name_arg(name_ptr, name_len);
    if (!name)
        return err(name.error());
    arch::IrqGuard guard; // no request may be queued between the idle check and the destroy
    vector::Named* entry = vector::find(*name);
    if (!entry)
        return err(missing(*name));
    vector::Collection* c = entry->collection;
    if (c->replicated && !replication::is_applier(sched::current()) && !journal::replaying()) {
        // Dropped on every voter by the group's applier.
        std::string_view n = *name;
        return finish(replication::submit(storage::RecordType::Drop, storage::kDropRecordBytes,
                                          [n](std::span<std::byte> out) {
            return static_cast<bool>(storage::encode_drop(out, n));
        }));
    }
    if (!c->replicated && replication::is_applier(sched::current()))
        return err(ktl::Error::WrongType); // the group's changes never reach this node's own collections
    if (c->outstanding > 0) {
        // Requests still queued or running on it (the caller tries again): background linking
        // starts no new slice on it meanwhile, or a drop could wait for all of it.
        c->link_paused_until_ns = clock::monotonic_ns() + 1'000'000'000ull;
        return err(ktl::Error::WouldBlock);
    }
    // A checkpoint being taken may hold this collection (an import waiting for it included, whose
    // drop is not logged): the drop waits for its end, or the checkpoint would bring it back.
    if (c->durable && journal::checkpoint_in_progress() && !journal::replaying())
        return err(ktl::Error::WouldBlock);
    // (An import not yet in a checkpoint was never on the disk: nothing to log.)
    const bool logged = c->durable && !c->awaiting_checkpoint && !journal::replaying();
    if (logged) {
        if (ktl::Error e = journal::reserve_drop(storage::kDropRecordBytes); e != ktl::Error::None)
            return err(e); // Full: the log has no room even for the drop (nothing is destroyed)
    }
    // Every capability dies first (tool tasks holding one included), then the memory goes.
    if (auto r = kcap::destroy_object(entry->object_id); !r) {
        if (logged)
            journal::unreserve(storage::kDropRecordBytes);
        return err(r.error());
    }
    vector::remove(entry);
    destroy_collection(c);
    if (!logged)
        return 0;
    return log_and_wait(storage::RecordType::Drop, storage::kDropRecordBytes, 0,
                        [&](std::span<std::byte> out) { return static_cast<bool>(storage::encode_drop(out, *name)); });
}

} // namespace handlers

// A document collection's system calls (docs/documents.md). Callers are checked here (the
// collection's kind, buffers, the packed forms of lib/text/doc_batch.h); the work is queued to the
// vector store's workers (vector/documents.h), and a durable collection's changes are logged as
// the bytes the caller gave (vector/service.cpp).
#include "../mm/kheap.h"
#include "../vector/durability.h"
#include "../vector/service.h"
#include "buffers.h"
#include "handlers.h"

#include <storage/records.h>
#include <text/doc_batch.h>

#include <cstring>

namespace handlers {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
int64_t finish_outcome(ipc::Outcome o) { return o.blocked ? kBlocked : o.value; }
vector::Collection& collection(const kcap::Resolved& o) { return *static_cast<vector::Collection*>(o.object); }

constexpr uint64_t kMaxBatch = storage::kMaxDocumentRecord - storage::kRecordPrefix; // a log record holds one

// A change's bytes, copied from the caller into the kernel (`extra` bytes more after them for
// the worker's own use), then parsed as `Parsed` reads them: what the worker applies and the
// journal logs is this copy, which nobody else can change meanwhile. The copy goes to the
// service with the request (vector::submit's `owned`).
template <typename Parsed>
struct Copied {
    std::byte* bytes;
    Parsed parsed;
};
template <typename Parsed>
ktl::Result<Copied<Parsed>> copied(const void* ptr, uint64_t length, size_t extra) {
    if (length == 0 || length > kMaxBatch || !buffers::readable(ptr, length, kMaxBatch))
        return ktl::Error::InvalidArgs;
    auto mem = TRY(kheap::alloc_for(kheap::Owner::Kernel, static_cast<size_t>(length) + extra));
    auto* copy = static_cast<std::byte*>(mem);
    std::memcpy(copy, ptr, static_cast<size_t>(length));
    auto parsed = Parsed::parse({ copy, static_cast<size_t>(length) });
    if (!parsed) {
        kheap::free(copy);
        return ktl::Error::InvalidArgs;
    }
    return Copied<Parsed> { copy, *parsed };
}

ktl::Error not_documents(const kcap::Resolved& o) {
    const vector::Collection& c = collection(o);
    if (c.stand_in)
        return ktl::Error::Elsewhere;
    return c.documents ? ktl::Error::None : ktl::Error::WrongType;
}

} // namespace

int64_t doc_upsert(const kcap::Resolved& o, Cap, const void* batch, uint64_t length) {
    if (ktl::Error e = not_documents(o); e != ktl::Error::None)
        return err(e);
    auto copy = copied<text::Batch>(batch, length, 0);
    if (!copy)
        return err(copy.error());
    const uint64_t args[5] = { reinterpret_cast<uint64_t>(copy->bytes), length, copy->parsed.count(), 0, 0 };
    return finish_outcome(vector::submit(vector::Op::DocUpsert, &collection(o), args, nullptr, copy->bytes));
}

int64_t doc_delete(const kcap::Resolved& o, Cap, const void* ids, uint64_t length, bool* absent) {
    if (ktl::Error e = not_documents(o); e != ktl::Error::None)
        return err(e);
    // (The kernel's flags for ids not there follow the copy: the log reads them, not the caller's.)
    auto copy = copied<text::IdList>(ids, length, text::kMaxBatchIds);
    if (!copy)
        return err(copy.error());
    const uint32_t count = copy->parsed.count();
    if (!buffers::writable(absent, count)) {
        kheap::free(copy->bytes);
        return err(ktl::Error::InvalidArgs);
    }
    const uint64_t args[5] = { reinterpret_cast<uint64_t>(copy->bytes), length, buffers::address(absent), count,
                               reinterpret_cast<uint64_t>(copy->bytes + length) };
    return finish_outcome(vector::submit(vector::Op::DocDelete, &collection(o), args, nullptr, copy->bytes));
}

int64_t doc_search(const kcap::Resolved& o, Cap, const abi::DocQuery* query_ptr, abi::DocHit* out) {
    if (ktl::Error e = not_documents(o); e != ktl::Error::None)
        return err(e);
    if (!buffers::readable(query_ptr, sizeof(abi::DocQuery)))
        return err(ktl::Error::InvalidArgs);
    const abi::DocQuery q = *query_ptr;
    if (q.k == 0 || q.k > abi::kDocMaxK || q.mode > 2 || q.length > abi::kDocMaxText ||
        (q.length > 0 && !buffers::readable(q.text, q.length, abi::kDocMaxText)) ||
        !buffers::writable(out, q.k * sizeof(abi::DocHit)))
        return err(ktl::Error::InvalidArgs);
    const uint64_t args[5] = { q.text, q.length, q.k | (uint64_t(q.mode) << 32), buffers::address(out), 0 };
    return finish_outcome(vector::submit(vector::Op::DocSearch, &collection(o), args));
}

int64_t doc_get(const kcap::Resolved& o, Cap, const char* id, uint64_t id_length, abi::DocRead* out) {
    if (ktl::Error e = not_documents(o); e != ktl::Error::None)
        return err(e);
    if (id_length == 0 || id_length > abi::kDocMaxId || !buffers::readable(id, id_length, abi::kDocMaxId) ||
        !buffers::writable(out, sizeof(abi::DocRead)))
        return err(ktl::Error::InvalidArgs);
    const abi::DocRead r = *out;
    if (r.text_capacity < abi::kDocMaxText || r.metadata_capacity < abi::kDocMaxMetadata ||
        !buffers::writable(r.text, r.text_capacity, abi::kDocMaxText * 2) ||
        !buffers::writable(r.metadata, r.metadata_capacity, abi::kDocMaxMetadata * 2))
        return err(ktl::Error::InvalidArgs);
    // The buffers checked here go to the worker (never read again from the caller's DocRead).
    const uint64_t args[5] = { buffers::address(id), id_length, buffers::address(out), r.text, r.metadata };
    return finish_outcome(vector::submit(vector::Op::DocGet, &collection(o), args));
}

} // namespace handlers

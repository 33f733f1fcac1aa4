#include "worker.h"

#include "../clock.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../syscall/vector_alloc.h"
#include "../sched/scheduler.h"
#include <abi/sys.h>
#include "documents.h"
#include "service.h"

#include <drivers/generic_timer.h>

namespace vector {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

struct IdList {
    const uint64_t* ids;
    uint64_t count;
};

bool in_list(uint64_t id, void* ctx) {
    const auto& l = *static_cast<const IdList*>(ctx);
    uint64_t lo = 0, hi = l.count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (l.ids[mid] == id)
            return true;
        if (l.ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

int64_t search(Collection& c, const Job& job) {
    const hnsw::Params& p = c.index.params();
    auto mem = kheap::alloc(hnsw::Index::scratch_bytes(p));
    if (!mem)
        return err(mem.error());
    int64_t result;
    auto scratch = c.index.make_scratch({ static_cast<std::byte*>(*mem), hnsw::Index::scratch_bytes(p) });
    if (!scratch) {
        result = err(scratch.error());
    } else {
        auto k = static_cast<uint32_t>(job.a[1]);
        // a[2] = ef | filter count << 32, a[4] = the filter's ids (vec_search checked them).
        IdList list { reinterpret_cast<const uint64_t*>(job.a[4]), job.a[2] >> 32 };
        hnsw::Filter filter { in_list, &list };
        auto n = c.index.search(*scratch, { reinterpret_cast<const float*>(job.a[0]), p.dim }, k,
                                static_cast<uint32_t>(job.a[2]), { reinterpret_cast<hnsw::Hit*>(job.a[3]), k },
                                list.ids ? &filter : nullptr);
        result = n ? static_cast<int64_t>(*n) : err(n.error());
    }
    kheap::free(*mem);
    return result;
}

// Runs preemptible, below the network and the bridges (service.cpp lowers this worker meanwhile);
// the log line says how long it took and how many timer interrupts arrived meanwhile, which
// shows that nothing was held off.
int64_t load(const Job& job) {
    const uint64_t started_ns = clock::monotonic_ns();
    const uint64_t started_ticks = GenericTimer::tick_count();
    std::span<const std::byte> snapshot(reinterpret_cast<const std::byte*>(job.a[0]), job.a[1]);
    auto made = handlers::load_collection(snapshot, static_cast<uint32_t>(job.a[2]));
    const uint64_t ms = (clock::monotonic_ns() - started_ns) / 1000000;
    if (!made) {
        KLOG_NOTICE("vector: snapshot of %llu bytes refused after %llu ms: %s",
                    static_cast<unsigned long long>(job.a[1]), static_cast<unsigned long long>(ms),
                    ktl::error_name(made.error()));
        return err(made.error());
    }
    KLOG_INFO("vector: snapshot of %llu bytes loaded in %llu ms (capacity %u), %llu timer interrupts meanwhile",
              static_cast<unsigned long long>(job.a[1]), static_cast<unsigned long long>(ms),
              (*made)->documents ? (*made)->docs.params().max_docs : (*made)->index.params().max_elements,
              static_cast<unsigned long long>(GenericTimer::tick_count() - started_ticks));
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(*made));
}

// A slice of background linking; the answer is how many stay unlinked. The log line at the end says
// how long the store searched part of a collection exhaustively after a boot.
int64_t link(Collection& c, uint64_t max) {
    const uint64_t now = clock::monotonic_ns();
    if (c.linking_since_ns == 0) {
        c.linking_since_ns = now;
        c.linking_total = c.index.deferred();
    }
    const uint32_t before = c.index.deferred();
    auto left = c.index.link_deferred(max > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(max));
    if (c.index.deferred() != before)
        ++c.link_slices; // the snapshot changed
    if (!left) {
        // (Snapshots carry unlinked vectors as such: nothing else depends on the graph work.)
        c.linking_stopped = true;
        KLOG_ERROR("vector: %s: linking the vectors recovery stored stopped (%s): %u stay found by scanning only",
                   c.name, ktl::error_name(left.error()), c.index.deferred());
        return err(left.error());
    }
    if (*left == 0) {
        KLOG_INFO("vector: %s: %u vectors recovery stored linked into the graph in %llu ms", c.name, c.linking_total,
                  static_cast<unsigned long long>((clock::monotonic_ns() - c.linking_since_ns) / 1000000));
        c.linking_since_ns = 0;
    }
    return *left;
}

int64_t execute(const Job& job) {
    if (job.op == Op::Load)
        return load(job);
    Collection& c = *job.collection;
    if (c.documents) { // (its ops, and its share of the store's)
        if (job.op == Op::Stats)
            return documents::stats(c, *reinterpret_cast<vector::Stats*>(job.a[0]));
        if (job.op == Op::Export)
            return documents::export_range(c, job);
        return documents::execute(c, job);
    }
    const uint32_t dim = c.index.params().dim;
    switch (job.op) {
    case Op::Insert: {
        auto* ids = reinterpret_cast<const uint64_t*>(job.a[0]);
        auto* vectors = reinterpret_cast<const float*>(job.a[1]);
        uint64_t count = job.a[2];
        const bool defer = job.a[4] & kInsertDeferLinks;
        ++c.writes;
        for (uint64_t i = 0; i < count; ++i) {
            const std::span<const float> v { vectors + i * dim, dim };
            auto r = defer ? c.index.upsert_deferred(ids[i], v, job.a[3]) // a3: the write's provenance node
                           : c.index.upsert(ids[i], v, job.a[3]);
            if (!r)
                return i > 0 ? static_cast<int64_t>(i) : err(r.error()); // count stored before the failure
        }
        return static_cast<int64_t>(count);
    }
    case Op::Search: return search(c, job);
    case Op::Get: {
        auto r = c.index.get(job.a[0], { reinterpret_cast<float*>(job.a[1]), dim });
        if (r && job.a[2] != 0)
            *reinterpret_cast<uint64_t*>(job.a[2]) = c.index.tag_of(job.a[0]).value_or(0);
        return r ? dim : err(r.error());
    }
    case Op::Delete: {
        ++c.writes;
        if (job.a[1] == 0) {
            auto r = c.index.remove(job.a[0]);
            return r ? 0 : err(r.error());
        }
        // Several ids as one change (one log record): a[0] the ids, a[1] their count, a[2] the
        // caller's flags for ids that were not there.
        auto* ids = reinterpret_cast<const uint64_t*>(job.a[0]);
        auto* missing = reinterpret_cast<bool*>(job.a[2]);
        int64_t deleted = 0;
        for (uint64_t i = 0; i < job.a[1]; ++i) {
            auto r = c.index.remove(ids[i]);
            missing[i] = !r;
            deleted += r ? 1 : 0;
        }
        return deleted;
    }
    case Op::Export: {
        if (job.a[0] == 0)
            return static_cast<int64_t>(c.index.snapshot_size());
        // Bytes [a2, a2 + a1) of the snapshot: a page costs its own size, not the collection's.
        auto r = c.index.save_range(job.a[2], { reinterpret_cast<std::byte*>(job.a[0]), job.a[1] });
        return r ? static_cast<int64_t>(*r) : err(r.error());
    }
    case Op::Load: break; // above: there is no collection yet
    case Op::Link: return link(c, job.a[0]);
    case Op::DocUpsert:
    case Op::DocDelete:
    case Op::DocSearch:
    case Op::DocGet: return err(ktl::Error::WrongType); // (a vector collection)
    case Op::Stats: {
        auto s = c.index.stats();
        auto* out = reinterpret_cast<vector::Stats*>(job.a[0]);
        out->count = s.count;
        out->deleted = s.deleted;
        out->levels = s.levels;
        out->bytes_used = s.bytes_used;
        out->writes = c.writes;
        out->serial = c.serial;
        out->bytes_budget = s.bytes_budget;
        out->distance_computations = s.distance_computations;
        out->dim = dim;
        out->metric = static_cast<uint32_t>(c.index.params().metric);
        out->replicated = c.replicated ? abi::kStatsReplicated : 0;
        out->unlinked = s.deferred;
        out->link_slices = c.link_slices;
        return 0;
    }
    }
    return err(ktl::Error::Unsupported);
}

} // namespace

int64_t worker_main(void* arg) {
    const uint32_t service = static_cast<const WorkerArgs*>(arg)->service_slot;
    uint64_t done = 0;
    int64_t result = 0;
    for (;;) {
        Job job {};
        int64_t r = sys::vec_serve(service, done, static_cast<uint64_t>(result), &job);
        if (r < 0)
            return r; // no service capability: nothing to serve
        result = execute(job);
        done = job.request;
    }
}

} // namespace vector

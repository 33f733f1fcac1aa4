#include "service.h"

#include "../mm/kheap.h"
#include "../sched/scheduler.h"
#include "durability.h"
#include "store.h"

#include <text/doc_batch.h>

#include <new>

namespace vector {
namespace {

struct Request {
    Job job;
    sched::WaitQueue caller; // the blocked submitter
    Request* next;
    bool running;
    Finish finish;
    uint8_t ceiling;         // the most the worker runs it at (0: its own): a Load's, or a background submitter's
    uint8_t worker_priority; // the worker's own, while the request runs it lower (0: not lowered)
    bool logged;             // a write to a durable collection: answered once its record is durable
    bool parked;             // a logged write waiting for the journal (room, a checkpoint): reads may pass it
    size_t reserved;         // journal bytes reserved for its record (0: none yet)
    void* owned;             // kernel copy of the caller's bytes the arguments point into (null: none)
};

constexpr uint32_t kMaxRequests = 256;
Request* g_queue_head = nullptr; // waiting, FIFO
Request* g_queue_tail = nullptr;
Request* g_running[kMaxRequests] = {};
// Background linking (Op::Link): one slice at a time, made by the service itself for no caller.
Request g_link {};
bool g_link_running = false;
sched::WaitQueue g_idle_workers;
ServiceStats g_stats {};

bool runnable(const Request& r) {
    if (!r.job.collection)
        return true; // a Load: nothing exists to lock yet
    const Collection& c = *r.job.collection;
    if (is_exclusive(r.job.op))
        return !c.writer && c.readers == 0;
    return !c.writer;
}

// `worker` takes the request: locks its collection and, for a Load or a background submitter's
// request, drops below the tasks that must keep answering meanwhile.
void start(Request& r, sched::Task* worker) {
    if (Collection* c = r.job.collection) {
        if (is_exclusive(r.job.op)) {
            c->writer = true;
            --c->queued_writes;
        } else {
            ++c->readers;
            if (c->readers > g_stats.max_concurrent_reads)
                g_stats.max_concurrent_reads = c->readers;
        }
    }
    if (r.ceiling && worker->priority > r.ceiling) {
        r.worker_priority = worker->priority;
        sched::set_priority(worker, r.ceiling);
    }
    r.running = true;
    --g_stats.queued;
    ++g_stats.running;
    for (auto& slot : g_running) {
        if (!slot) {
            slot = &r;
            break;
        }
    }
}

// The most a logged write's record can take (the whole chunk stored).
size_t record_bound(const Request& r) {
    if (r.job.op == Op::DocUpsert || r.job.op == Op::DocDelete)
        return storage::document_record_bytes(r.job.a[1]); // (the batch or id list as the call gave it)
    if (r.job.op == Op::Delete)
        return storage::delete_record_bytes(r.job.a[1] ? r.job.a[1] : 1);
    return storage::upsert_record_bytes(r.job.collection->index.params().dim, r.job.a[2]);
}

void unlink(Request* r, Request* prev) {
    if (prev)
        prev->next = r->next;
    else
        g_queue_head = r->next;
    if (g_queue_tail == r)
        g_queue_tail = prev;
    r->next = nullptr;
}

// A queued logged write the journal cannot take (the log is full, or the journal failed): it is
// answered now, without running, so nothing is changed that the disk would not have.
void refuse(Request* r, ktl::Error e) {
    Collection& c = *r->job.collection;
    --c.queued_writes;
    --c.outstanding;
    --g_stats.queued;
    ++g_stats.completed;
    sched::wake_one(r->caller, -static_cast<int64_t>(e));
    if (r->owned)
        kheap::free(r->owned);
    kheap::free(r);
}

// First queued request whose collection lock is free. A read queued behind a write to the
// same collection waits for it, so writes are never starved and order per collection holds.
// A logged write also needs room in the journal for its record: it waits while the staging
// buffer is full, and is refused when the log is.
Request* take_runnable() {
    Request* prev = nullptr;
    Request* next = nullptr;
    for (Request* r = g_queue_head; r; prev = r, r = next) {
        next = r->next;
        // An earlier write to the same collection goes first, unless it is parked: a write nobody
        // has been answered for orders nothing, and a checkpoint's own reads must get through.
        // A write queued behind a parked one waits for the journal too, so it is parked as well:
        // otherwise the checkpoint's export would wait behind it, and it behind the checkpoint
        // (every durable call hung once a checkpoint began with two writes queued).
        bool blocked_by_earlier_write = false;
        bool behind_parked_only = true;
        for (Request* e = g_queue_head; e != r; e = e->next) {
            if (e->job.collection != r->job.collection || !is_write(e->job.op))
                continue;
            behind_parked_only = behind_parked_only && e->parked;
            if (!(e->parked && !is_write(r->job.op)))
                blocked_by_earlier_write = true;
        }
        if (blocked_by_earlier_write && r->logged && r->reserved == 0 && behind_parked_only)
            r->parked = true;
        if (blocked_by_earlier_write || !runnable(*r))
            continue;
        if (r->logged && r->reserved == 0) {
            if (r->job.collection->awaiting_checkpoint) {
                r->parked = true; // the checkpoint that makes its collection durable comes first
                continue;
            }
            const size_t bound = record_bound(*r);
            ktl::Error e = bound ? durability::reserve(bound) : ktl::Error::InvalidArgs;
            if (e == ktl::Error::WouldBlock) {
                r->parked = true; // the storage task's next take or checkpoint makes room (it calls kick())
                continue;
            }
            if (e != ktl::Error::None) {
                unlink(r, prev);
                refuse(r, e);
                r = prev; // the walk goes on after the request before it (the new head if none)
                if (!r)
                    next = g_queue_head;
                continue;
            }
            r->reserved = bound;
            r->parked = false;
        }
        unlink(r, prev);
        return r;
    }
    return nullptr;
}

// Writes the record of a logged write that completed with `result`; true when the caller is now
// answered by the journal once the record is durable.
bool log_document_write(Request& r, int64_t& result);

bool log_write(Request& r, int64_t& result) {
    if (r.job.op == Op::DocUpsert || r.job.op == Op::DocDelete)
        return log_document_write(r, result);
    const Job& job = r.job;
    const Collection& c = *job.collection;
    std::string_view name(c.name, c.name_length);
    size_t bytes = 0;
    if (job.op == Op::Insert && result > 0)
        bytes = storage::upsert_record_bytes(c.index.params().dim, static_cast<uint64_t>(result));
    else if (job.op == Op::Delete && job.a[1] == 0 && result == 0)
        bytes = storage::delete_record_bytes(1);
    else if (job.op == Op::Delete && job.a[1] > 0 && result > 0)
        bytes = storage::delete_record_bytes(static_cast<uint64_t>(result));
    if (bytes == 0) { // nothing changed: nothing to log
        durability::unreserve(r.reserved);
        return false;
    }
    uint64_t ticket = 0;
    auto type = job.op == Op::Insert ? storage::RecordType::Upsert : storage::RecordType::Delete;
    std::span<std::byte> out = durability::stage(type, bytes, r.reserved, ticket, r.caller.head);
    ktl::Result<size_t> written = ktl::Error::IoError;
    if (!out.empty()) {
        // The ids and vectors are still the blocked caller's: read them as the worker did.
        written = job.op == Op::Insert
                      ? storage::encode_upsert(out, name, c.index.params().dim, static_cast<uint32_t>(result), job.a[3],
                                               reinterpret_cast<const uint64_t*>(job.a[0]),
                                               reinterpret_cast<const float*>(job.a[1]))
                  : job.a[1] == 0 ? storage::encode_delete(out, name, &job.a[0], 1)
                                  : storage::encode_delete(out, name, reinterpret_cast<const uint64_t*>(job.a[0]),
                                                           static_cast<uint32_t>(job.a[1]),
                                                           reinterpret_cast<const bool*>(job.a[2]));
    }
    if (!written) {
        // Applied in memory but not logged: the journal has failed (it says so); the caller
        // learns its write is not durable.
        result = -static_cast<int64_t>(ktl::Error::IoError);
        return false;
    }
    durability::defer(r.caller, result, &r, ticket);
    return true;
}

// A document collection's change: the batch's documents stored (all, or the first `result` of
// them), or the ids deleted, as its record's body (lib/text/doc_batch.h).
bool log_document_write(Request& r, int64_t& result) {
    const Job& job = r.job;
    const Collection& c = *job.collection;
    const std::string_view name(c.name, c.name_length);
    const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(job.a[0]), job.a[1]);
    if (result <= 0) { // nothing changed: nothing to log
        durability::unreserve(r.reserved);
        return false;
    }
    std::byte head[text::kBatchHeader];
    std::span<const std::byte> head_bytes, body;
    size_t kept_ids = 0; // a delete's: the id list's bytes of the ids really deleted
    if (job.op == Op::DocUpsert) {
        // (The kernel's copy, parsed when submitted: it cannot have changed since.)
        auto batch = text::Batch::parse(in);
        const auto n = static_cast<uint32_t>(result);
        if (!batch) {
            body = {};
        } else if (n < batch->count()) {
            text::write_batch_header(head, n, batch->provenance());
            head_bytes = head;
            body = in.subspan(text::kBatchHeader, batch->prefix_bytes(n));
        } else {
            body = in;
        }
    } else {
        auto ids = text::IdList::parse(in);
        const bool* missing = reinterpret_cast<const bool*>(job.a[4]); // (the kernel's flags)
        std::string_view id;
        for (uint32_t i = 0; ids && i < job.a[3] && ids->next(id); ++i)
            kept_ids += missing[i] ? 0 : 1 + id.size();
    }
    const size_t bytes = job.op == Op::DocUpsert ? storage::document_record_bytes(head_bytes.size() + body.size())
                                                 : storage::document_record_bytes(text::kIdListHeader + kept_ids);
    if (bytes == 0) { // (cannot happen for a change parsed when submitted: refused as not logged)
        durability::unreserve(r.reserved);
        result = -static_cast<int64_t>(ktl::Error::IoError);
        return false;
    }
    uint64_t ticket = 0;
    const auto type = job.op == Op::DocUpsert ? storage::RecordType::DocUpsert : storage::RecordType::DocDelete;
    std::span<std::byte> out = durability::stage(type, bytes, r.reserved, ticket, r.caller.head);
    bool written = false;
    if (!out.empty() && job.op == Op::DocUpsert) {
        written = static_cast<bool>(storage::encode_document(out, name, head_bytes, body));
    } else if (!out.empty()) {
        // The ids deleted, written in place after the record's prefix.
        const std::span<std::byte> list = out.subspan(storage::kRecordPrefix, bytes - storage::kRecordPrefix);
        text::IdListWriter w(list);
        auto ids = text::IdList::parse(in);
        const bool* missing = reinterpret_cast<const bool*>(job.a[4]);
        std::string_view id;
        written = true;
        for (uint32_t i = 0; ids && i < job.a[3] && ids->next(id); ++i)
            if (!missing[i])
                written = written && w.add(id);
        written = written && w.finish() == list.size() && storage::encode_document(out, name, {}, list);
    }
    if (!written) {
        result = -static_cast<int64_t>(ktl::Error::IoError);
        return false;
    }
    durability::defer(r.caller, result, &r, ticket);
    return true;
}

// Work for a worker that has no request: a slice of the vectors recovery stored unlinked, for a
// collection no request uses or waits for (the next request on it waits one slice at most), at
// the priority of a Load (below everything that answers), once recovery is over (before, it
// would only slow the replay down), never while a checkpoint's pages are read. Null: none.
Request* take_background() {
    if (g_link_running || durability::recovering() || durability::checkpointing())
        return nullptr;
    Collection* c = idle_with_unlinked();
    if (!c)
        return nullptr;
    g_link = Request {};
    g_link.job.request = reinterpret_cast<uint64_t>(&g_link);
    g_link.job.op = Op::Link;
    g_link.job.collection = c;
    g_link.job.a[0] = kLinkSlice;
    g_link.ceiling = kLoadPriority;
    g_link_running = true;
    ++c->queued_writes; // (as if queued: start() takes the request as it takes a queued one)
    ++c->outstanding;
    ++g_stats.submitted;
    ++g_stats.queued;
    return &g_link;
}

void hand_to_idle_workers() {
    while (sched::Task* w = g_idle_workers.head) {
        Request* r = take_runnable();
        if (!r)
            r = take_background();
        if (!r)
            return;
        start(*r, w);
        *static_cast<Job*>(w->wait_buf) = r->job;
        sched::wake_one(g_idle_workers, 0);
    }
}

Request* find_running(uint64_t token) {
    for (auto& slot : g_running) {
        if (slot && reinterpret_cast<uint64_t>(slot) == token) {
            Request* r = slot;
            slot = nullptr;
            return r;
        }
    }
    return nullptr;
}

} // namespace

ipc::Outcome submit(Op op, Collection* collection, const uint64_t (&args)[5], Finish finish, void* owned) {
    auto give_back = [owned] {
        if (owned)
            kheap::free(owned);
    };
    if (g_stats.queued + g_stats.running >= kMaxRequests) {
        give_back();
        return { false, -static_cast<int64_t>(ktl::Error::WouldBlock) };
    }
    auto mem = kheap::alloc_for(kheap::Owner::Kernel, sizeof(Request));
    if (!mem) {
        give_back();
        return { false, -static_cast<int64_t>(mem.error()) };
    }
    auto* r = new (*mem) Request {};
    r->owned = owned;
    r->job.request = reinterpret_cast<uint64_t>(r);
    r->job.op = op;
    r->job.collection = collection;
    for (int i = 0; i < 5; ++i)
        r->job.a[i] = args[i];
    r->finish = finish;
    const uint8_t submitter = sched::current()->priority;
    r->ceiling = op == Op::Load ? kLoadPriority : submitter < kForegroundPriority ? submitter : 0;
    // The storage task's own writes while it replays the log are the log: never logged again.
    r->logged = collection && is_change(op) && collection->durable && !durability::replaying();
    if (collection) {
        if (is_exclusive(op))
            ++collection->queued_writes;
        ++collection->outstanding;
    }
    if (g_queue_tail)
        g_queue_tail->next = r;
    else
        g_queue_head = r;
    g_queue_tail = r;
    ++g_stats.submitted;
    ++g_stats.queued;
    // The caller's buffers stay valid while it is blocked here; it cannot be killed while
    // blocked (only a running task faults).
    sched::block_current(r->caller, 0);
    hand_to_idle_workers();
    // Refused on the spot (take_runnable: the journal cannot take its record): woken already,
    // before this call returns, so its answer goes out as this call's result (a wake's result
    // lands in the saved frame, which the switch at the end of the call would overwrite).
    sched::Task* self = sched::current();
    if (self->state != sched::TaskState::Blocked)
        return { false, static_cast<int64_t>(self->frame.x[0]) };
    return { true, 0 };
}

ipc::Outcome serve(uint64_t done, int64_t result, Job* job_out) {
    if (done != 0) {
        Request* r = find_running(done);
        if (!r)
            return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) };
        if (Collection* c = r->job.collection) {
            if (is_exclusive(r->job.op))
                c->writer = false;
            else
                --c->readers;
            --c->outstanding;
        }
        if (r->worker_priority)
            sched::set_priority(sched::current(), r->worker_priority);
        --g_stats.running;
        ++g_stats.completed;
        if (r->finish)
            result = r->finish(r->job, result, r->caller.head);
        // The arguments' kernel copy outlives the record (written below, or not at all), not the
        // request (a logged one waits for its commit).
        void* owned = r->owned;
        r->owned = nullptr;
        // An import kept on a disk is answered once the checkpoint holding it is written.
        if (r == &g_link) {
            g_link_running = false; // (nobody waits for it)
        } else if (const uint64_t ticket = r->job.op == Op::Load ? durability::take_import_ticket() : 0) {
            durability::defer(r->caller, result, r, ticket);
        } else if (!r->logged || !log_write(*r, result)) {
            sched::wake_one(r->caller, result);
            kheap::free(r);
        }
        if (owned)
            kheap::free(owned);
        hand_to_idle_workers(); // the lock just released may unblock queued requests
    }
    Request* next = take_runnable();
    if (!next)
        next = take_background();
    if (next) {
        start(*next, sched::current());
        *job_out = next->job;
        return { false, 0 };
    }
    sched::Task* self = sched::current();
    self->wait_buf = job_out;
    self->wait_len = sizeof(Job);
    sched::block_current(g_idle_workers, 0);
    return { true, 0 };
}

ServiceStats stats() { return g_stats; }

void kick() { hand_to_idle_workers(); }

} // namespace vector

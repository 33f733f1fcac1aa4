#include "service.h"

#include "../mm/kheap.h"
#include "../sched/scheduler.h"

#include <new>

namespace vector {
namespace {

struct Request {
    Job job;
    sched::WaitQueue caller; // the blocked submitter
    Request* next;
    bool running;
    Finish finish;
    uint8_t worker_priority; // the worker's own, while a Load runs it lower (0: not lowered)
};

constexpr uint32_t kMaxRequests = 256;
Request* g_queue_head = nullptr; // waiting, FIFO
Request* g_queue_tail = nullptr;
Request* g_running[kMaxRequests] = {};
sched::WaitQueue g_idle_workers;
ServiceStats g_stats {};

bool runnable(const Request& r) {
    if (!r.job.collection)
        return true; // a Load: nothing exists to lock yet
    const Collection& c = *r.job.collection;
    if (is_write(r.job.op))
        return !c.writer && c.readers == 0;
    return !c.writer;
}

// `worker` takes the request: locks its collection and, for a Load, drops below the tasks that
// must keep answering meanwhile.
void start(Request& r, sched::Task* worker) {
    if (Collection* c = r.job.collection) {
        if (is_write(r.job.op)) {
            c->writer = true;
            --c->queued_writes;
        } else {
            ++c->readers;
            if (c->readers > g_stats.max_concurrent_reads)
                g_stats.max_concurrent_reads = c->readers;
        }
    }
    if (r.job.op == Op::Load && worker->priority > kLoadPriority) {
        r.worker_priority = worker->priority;
        sched::set_priority(worker, kLoadPriority);
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

// First queued request whose collection lock is free. A read queued behind a write to the
// same collection waits for it, so writes are never starved and order per collection holds.
Request* take_runnable() {
    Request* prev = nullptr;
    for (Request* r = g_queue_head; r; prev = r, r = r->next) {
        bool blocked_by_earlier_write = false;
        for (Request* e = g_queue_head; e != r; e = e->next)
            if (e->job.collection == r->job.collection && is_write(e->job.op))
                blocked_by_earlier_write = true;
        if (blocked_by_earlier_write || !runnable(*r))
            continue;
        if (prev)
            prev->next = r->next;
        else
            g_queue_head = r->next;
        if (g_queue_tail == r)
            g_queue_tail = prev;
        r->next = nullptr;
        return r;
    }
    return nullptr;
}

void hand_to_idle_workers() {
    while (sched::Task* w = g_idle_workers.head) {
        Request* r = take_runnable();
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

ipc::Outcome submit(Op op, Collection* collection, const uint64_t (&args)[5], Finish finish) {
    if (g_stats.queued + g_stats.running >= kMaxRequests)
        return { false, -static_cast<int64_t>(ktl::Error::WouldBlock) };
    auto mem = kheap::alloc_for(kheap::Owner::Kernel, sizeof(Request));
    if (!mem)
        return { false, -static_cast<int64_t>(mem.error()) };
    auto* r = new (*mem) Request {};
    r->job.request = reinterpret_cast<uint64_t>(r);
    r->job.op = op;
    r->job.collection = collection;
    for (int i = 0; i < 5; ++i)
        r->job.a[i] = args[i];
    r->finish = finish;
    if (collection) {
        if (is_write(op))
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
    return { true, 0 };
}

ipc::Outcome serve(uint64_t done, int64_t result, Job* job_out) {
    if (done != 0) {
        Request* r = find_running(done);
        if (!r)
            return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) };
        if (Collection* c = r->job.collection) {
            if (is_write(r->job.op))
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
        sched::wake_one(r->caller, result);
        kheap::free(r);
        hand_to_idle_workers(); // the lock just released may unblock queued requests
    }
    if (Request* next = take_runnable()) {
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

} // namespace vector

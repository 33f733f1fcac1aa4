// Synchronisation and message-queue system calls. Objects live on the kernel heap, charged to
// the creating task, are reached only through capabilities, and end with that task at the latest
// (reclaim.cpp).
#include "../clock.h"
#include "../ipc/message_queue.h"
#include "../ipc/sync.h"
#include "../ipc/timer.h"
#include "../vector/collection.h"
#include "../mm/kheap.h"
#include "../sched/scheduler.h"
#include "buffers.h"
#include "handlers.h"
#include "../net/datagram.h"

#include <new>

namespace handlers {

uint64_t deadline_after(uint64_t timeout_ns) { return timeout_ns ? clock::monotonic_ns() + timeout_ns : 0; }
int64_t finish(ipc::Outcome o) { return o.blocked ? kBlocked : o.value; }

namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

// Wakes anyone blocked on the object (-BadHandle), then frees it.
template <typename T>
void destroy_object_of(void* object) {
    T* obj = static_cast<T*>(object);
    obj->shutdown();
    obj->~T();
    kheap::free(obj);
}

template <typename T, typename... Args>
int64_t create_object(kcap::ObjectType type, Args... args) {
    sched::Task* self = sched::current();
    auto mem = kheap::alloc(sizeof(T));
    if (!mem)
        return err(mem.error());
    T* obj = new (*mem) T(args...);
    auto slot = kcap::create_owned_and_grant(self, type, obj,
                                             kcap::kRead | kcap::kWrite | kcap::kGrant | kcap::kRevoke);
    if (!slot) {
        obj->~T();
        kheap::free(obj);
        return err(slot.error());
    }
    return *slot;
}

} // namespace

int64_t sem_create(const kcap::Resolved&, Cap, int64_t initial, int64_t max) {
    if (initial < 0 || max <= 0 || initial > max || max > (1ll << 30))
        return err(ktl::Error::InvalidArgs);
    return create_object<ipc::Semaphore>(kcap::ObjectType::Semaphore, initial, max);
}

int64_t sem_wait(const kcap::Resolved& o, Cap, uint64_t timeout_ns) {
    return finish(static_cast<ipc::Semaphore*>(o.object)->wait(deadline_after(timeout_ns)));
}

int64_t sem_post(const kcap::Resolved& o, Cap) {
    auto r = static_cast<ipc::Semaphore*>(o.object)->post();
    return r ? 0 : err(r.error());
}

int64_t mutex_create(const kcap::Resolved&, Cap) { return create_object<ipc::Mutex>(kcap::ObjectType::Mutex); }

int64_t mutex_lock(const kcap::Resolved& o, Cap, uint64_t timeout_ns) {
    return finish(static_cast<ipc::Mutex*>(o.object)->lock(deadline_after(timeout_ns)));
}

int64_t mutex_unlock(const kcap::Resolved& o, Cap) {
    auto r = static_cast<ipc::Mutex*>(o.object)->unlock();
    return r ? 0 : err(r.error());
}

int64_t event_create(const kcap::Resolved&, Cap, uint64_t auto_reset) {
    return create_object<ipc::Event>(kcap::ObjectType::Event, auto_reset != 0);
}

int64_t event_wait(const kcap::Resolved& o, Cap, uint64_t timeout_ns) {
    return finish(static_cast<ipc::Event*>(o.object)->wait(deadline_after(timeout_ns)));
}

int64_t event_signal(const kcap::Resolved& o, Cap) {
    static_cast<ipc::Event*>(o.object)->signal();
    return 0;
}

int64_t queue_create(const kcap::Resolved&, Cap, uint32_t slot_bytes, uint32_t slots) {
    sched::Task* self = sched::current();
    auto q = ipc::MessageQueue::create(slot_bytes, slots);
    if (!q)
        return err(q.error());
    auto slot = kcap::create_owned_and_grant(self, kcap::ObjectType::Queue, *q,
                                             kcap::kRead | kcap::kWrite | kcap::kGrant | kcap::kRevoke);
    if (!slot) {
        (*q)->destroy();
        return err(slot.error());
    }
    return *slot;
}

int64_t queue_send(const kcap::Resolved& o, Cap, const void* message, uint64_t len, uint64_t timeout_ns) {
    auto* q = static_cast<ipc::MessageQueue*>(o.object);
    if (len > q->slot_size() || (len && !buffers::readable(message, len)))
        return err(ktl::Error::InvalidArgs);
    return finish(q->send(message, static_cast<uint32_t>(len), deadline_after(timeout_ns)));
}

int64_t queue_receive(const kcap::Resolved& o, Cap, void* buffer, uint64_t cap, uint64_t timeout_ns) {
    auto* q = static_cast<ipc::MessageQueue*>(o.object);
    if (cap > ipc::MessageQueue::kMaxSlotSize || (cap && !buffers::writable(buffer, cap)))
        return err(ktl::Error::InvalidArgs);
    return finish(q->receive(buffer, static_cast<uint32_t>(cap), deadline_after(timeout_ns)));
}

} // namespace handlers

namespace handlers {

int64_t timer_create(const kcap::Resolved&, Cap) { return create_object<ipc::Timer>(kcap::ObjectType::Timer); }

int64_t timer_set(const kcap::Resolved& o, Cap, uint64_t first_ns, uint64_t period_ns) {
    constexpr uint64_t kMaxNs = 24ull * 3600 * 1000000000ull;
    if (first_ns > kMaxNs || period_ns > kMaxNs || (period_ns != 0 && period_ns < 1000000))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs); // periods below 1 ms would just burn ticks
    static_cast<ipc::Timer*>(o.object)->set(clock::monotonic_ns(), first_ns, period_ns);
    return 0;
}

int64_t timer_wait(const kcap::Resolved& o, Cap, uint64_t timeout_ns) {
    return finish(static_cast<ipc::Timer*>(o.object)->wait(deadline_after(timeout_ns)));
}

int64_t object_destroy(const kcap::Resolved& o, Cap) {
    switch (o.type) {
    case kcap::ObjectType::Semaphore:
    case kcap::ObjectType::Mutex:
    case kcap::ObjectType::Event:
    case kcap::ObjectType::Queue:
    case kcap::ObjectType::Timer:
    case kcap::ObjectType::Region:
    case kcap::ObjectType::Datagram: break;
    case kcap::ObjectType::VectorCollection:
        if (static_cast<vector::Collection*>(o.object)->outstanding > 0)
            return -static_cast<int64_t>(ktl::Error::WouldBlock); // requests still queued or running
        break;
    default: return -static_cast<int64_t>(ktl::Error::Unsupported);
    }
    // First make every capability dead, so nothing can reach the object while it goes away.
    if (auto r = kcap::destroy_object(o.object_id); !r)
        return -static_cast<int64_t>(r.error());
    destroy_by_type(o.type, o.object);
    return 0;
}

void destroy_by_type(kcap::ObjectType type, void* object) {
    switch (type) {
    case kcap::ObjectType::Semaphore: destroy_object_of<ipc::Semaphore>(object); break;
    case kcap::ObjectType::Mutex: destroy_object_of<ipc::Mutex>(object); break;
    case kcap::ObjectType::Event: destroy_object_of<ipc::Event>(object); break;
    case kcap::ObjectType::Timer: destroy_object_of<ipc::Timer>(object); break;
    case kcap::ObjectType::Queue: static_cast<ipc::MessageQueue*>(object)->destroy(); break;
    case kcap::ObjectType::Region: destroy_region(object); break;
    case kcap::ObjectType::VectorCollection: destroy_collection(object); break;
    case kcap::ObjectType::Datagram: static_cast<net::Datagram*>(object)->close(); break;
    default: break;
    }
}

} // namespace handlers

#include "message_queue.h"

#include "../mm/kheap.h"
#include "../sched/scheduler.h"

#include <cstring>
#include <new>

namespace ipc {

ktl::Result<MessageQueue*> MessageQueue::create(uint32_t slot_size, uint32_t capacity) {
    if (slot_size == 0 || slot_size > kMaxSlotSize || capacity == 0 || capacity > kMaxCapacity)
        return ktl::Error::InvalidArgs;
    void* mem = TRY(kheap::alloc(sizeof(MessageQueue)));
    auto storage = kheap::alloc(static_cast<size_t>(capacity) * (slot_size + 4));
    if (!storage) {
        kheap::free(mem);
        return storage.error();
    }
    auto* q = new (mem) MessageQueue();
    q->m_slot_size = slot_size;
    q->m_capacity = capacity;
    q->m_storage = static_cast<uint8_t*>(*storage);
    return q;
}

void MessageQueue::destroy() {
    // Nobody may stay blocked on a queue that no longer exists.
    sched::wake_all(m_senders, -static_cast<int64_t>(ktl::Error::BadHandle));
    sched::wake_all(m_receivers, -static_cast<int64_t>(ktl::Error::BadHandle));
    kheap::free(m_storage);
    this->~MessageQueue();
    kheap::free(this);
}

void MessageQueue::push_tail(const void* msg, uint32_t len) {
    uint8_t* s = slot((m_head + m_count) % m_capacity);
    memcpy(s, &len, 4);
    memcpy(s + 4, msg, len);
    ++m_count;
}

Outcome MessageQueue::send(const void* msg, uint32_t len, uint64_t deadline_ns) {
    if (len > m_slot_size)
        return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) };
    if (sched::Task* r = m_receivers.head) { // a receiver is waiting: hand the message over
        if (len > r->wait_len) {
            sched::wake_one(m_receivers, -static_cast<int64_t>(ktl::Error::Truncated));
        } else {
            memcpy(r->wait_buf, msg, len);
            sched::wake_one(m_receivers, len);
            return { false, 0 };
        }
    }
    if (m_count < m_capacity) {
        push_tail(msg, len);
        return { false, 0 };
    }
    sched::Task* self = sched::current();
    self->wait_buf = const_cast<void*>(msg);
    self->wait_len = len;
    sched::block_current(m_senders, deadline_ns);
    return { true, 0 };
}

Outcome MessageQueue::receive(void* buf, uint32_t cap, uint64_t deadline_ns) {
    if (m_count > 0) {
        uint8_t* s = slot(m_head);
        uint32_t len;
        memcpy(&len, s, 4);
        if (len > cap)
            return { false, -static_cast<int64_t>(ktl::Error::Truncated) };
        memcpy(buf, s + 4, len);
        m_head = (m_head + 1) % m_capacity;
        --m_count;
        // Room now: the longest-blocked sender's message joins the tail, preserving order.
        if (sched::Task* s2 = m_senders.head) {
            push_tail(s2->wait_buf, static_cast<uint32_t>(s2->wait_len));
            sched::wake_one(m_senders, 0);
        }
        return { false, len };
    }
    sched::Task* self = sched::current();
    self->wait_buf = buf;
    self->wait_len = cap;
    sched::block_current(m_receivers, deadline_ns);
    return { true, 0 };
}

} // namespace ipc

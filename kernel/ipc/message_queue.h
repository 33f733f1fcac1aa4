#pragma once
// Bounded message queue with fixed-size slots; messages are copied in and out. A sender blocks
// while the queue is full, a receiver while it is empty; both with optional deadlines. Order is
// FIFO across queued messages and blocked senders.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "sync.h"

namespace ipc {

class MessageQueue {
public:
    static constexpr uint32_t kMaxSlotSize = 4096;
    static constexpr uint32_t kMaxCapacity = 4096;

    static ktl::Result<MessageQueue*> create(uint32_t slot_size, uint32_t capacity);
    void destroy();

    Outcome send(const void* msg, uint32_t len, uint64_t deadline_ns);
    // value = message length on success.
    Outcome receive(void* buf, uint32_t cap, uint64_t deadline_ns);
    uint32_t count() const { return m_count; }
    uint32_t capacity() const { return m_capacity; }
    uint32_t slot_size() const { return m_slot_size; }

private:
    MessageQueue() = default;
    uint8_t* slot(uint32_t i) { return m_storage + static_cast<size_t>(i) * (m_slot_size + 4); }
    void push_tail(const void* msg, uint32_t len);

    uint32_t m_slot_size = 0;
    uint32_t m_capacity = 0;
    uint32_t m_head = 0;
    uint32_t m_count = 0;
    uint8_t* m_storage = nullptr; // capacity x (u32 length + slot)
    sched::WaitQueue m_senders;
    sched::WaitQueue m_receivers;
};

} // namespace ipc

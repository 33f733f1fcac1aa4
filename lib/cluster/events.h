#pragma once
// What a node tells its owner: a bounded ring of events (the owner drains it; if it does not,
// new events are lost and counted) and a limiter that lets each source of refused datagrams
// produce at most one event per 10 s, so a flood cannot push everything else out.
#include <cstddef>
#include <cstdint>

#include <cluster/types.h>

namespace cluster {

class EventRing {
public:
    bool push(const Event& e); // false when full (the event is lost)
    size_t drain(Event* out, size_t max);
    size_t size() const { return m_count; }

private:
    Event m_ring[kEventCapacity];
    size_t m_head = 0; // oldest
    size_t m_count = 0;
};

class RefusalLimiter {
public:
    static constexpr uint64_t kInterval = 10'000'000'000ull;
    bool allow(Address source, uint64_t now_ns);

private:
    struct Slot {
        Address source;
        uint64_t last_ns = 0;
        bool used = false;
    };
    static constexpr size_t kSlots = 16;
    Slot m_slots[kSlots];
};

} // namespace cluster

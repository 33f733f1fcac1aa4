#include "events.h"

namespace cluster {

bool EventRing::push(const Event& e) {
    if (m_count == kEventCapacity)
        return false;
    m_ring[(m_head + m_count) % kEventCapacity] = e;
    ++m_count;
    return true;
}

size_t EventRing::drain(Event* out, size_t max) {
    size_t n = 0;
    while (n < max && m_count > 0) {
        out[n++] = m_ring[m_head];
        m_head = (m_head + 1) % kEventCapacity;
        --m_count;
    }
    return n;
}

bool RefusalLimiter::allow(Address source, uint64_t now_ns) {
    size_t victim = 0;
    for (size_t i = 0; i < kSlots; ++i) {
        Slot& s = m_slots[i];
        if (s.used && s.source == source) {
            if (now_ns - s.last_ns < kInterval && now_ns >= s.last_ns)
                return false;
            s.last_ns = now_ns;
            return true;
        }
        // Forget the quietest source first; an unused slot is the quietest of all.
        if (!s.used || (m_slots[victim].used && s.last_ns < m_slots[victim].last_ns))
            victim = i;
    }
    m_slots[victim] = Slot{ source, now_ns, true };
    return true;
}

} // namespace cluster

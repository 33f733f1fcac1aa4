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

bool RefusalLimiter::allow(Verdict kind, uint64_t now_ns, uint64_t& unreported) {
    unreported = 0;
    Kind& k = m_kinds[size_t(kind) % kKinds];
    const bool quiet = !k.seen || now_ns < k.last_seen_ns || now_ns - k.last_seen_ns >= kLongestInterval;
    k.last_seen_ns = now_ns;
    if (quiet) {
        unreported = k.unreported;
        k = Kind { true, now_ns, now_ns, kFirstInterval, 0 };
        return true;
    }
    if (now_ns >= k.last_report_ns && now_ns - k.last_report_ns < k.interval_ns) {
        ++k.unreported;
        return false;
    }
    unreported = k.unreported;
    k.unreported = 0;
    k.last_report_ns = now_ns;
    k.interval_ns = k.interval_ns >= kLongestInterval / 2 ? kLongestInterval : k.interval_ns * 2;
    return true;
}

} // namespace cluster

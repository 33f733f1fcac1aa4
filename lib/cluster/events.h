#pragma once
// What a node tells its owner: a bounded ring of events (the owner drains it; if it does not,
// new events are lost and counted) and a limiter on the events refused datagrams produce, so a
// flood cannot push everything else out (of the ring, or of the audit trail the kernel writes
// them to).
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

// Refused datagrams become events sparingly, per kind of refusal (malformed, bad MAC, ...) and
// whatever their source: a keyless sender controls its source address and port, so a limit per
// source bounds nothing. The first refusal of a kind is reported; after that at most one per
// interval, and the interval doubles with every report while refusals of that kind keep coming
// (1 s up to an hour), so a flood of any length yields about a dozen events in its first hour
// and one an hour after that. Each event carries how many of its kind went unreported before it;
// every refusal is counted in Stats regardless. A whole hour without a refusal of a kind starts
// it over.
class RefusalLimiter {
public:
    static constexpr uint64_t kFirstInterval = 1'000'000'000ull;
    static constexpr uint64_t kLongestInterval = 3600 * kFirstInterval;
    // True when this refusal is to be reported; `unreported` is then how many of its kind were not.
    bool allow(Verdict kind, uint64_t now_ns, uint64_t& unreported);

private:
    struct Kind {
        bool seen = false;
        uint64_t last_report_ns = 0;
        uint64_t last_seen_ns = 0;
        uint64_t interval_ns = kFirstInterval;
        uint64_t unreported = 0;
    };
    static constexpr size_t kKinds = 8; // Verdict's values
    Kind m_kinds[kKinds];
};

} // namespace cluster

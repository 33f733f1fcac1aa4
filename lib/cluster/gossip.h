#pragma once
// Updates waiting to be piggy-backed. One entry per member name (a newer update replaces the
// older one and starts its count again); each goes out a limited number of times, the least
// sent first, so fresh news overtakes news everyone has heard.
#include <cstddef>
#include <cstdint>

#include <cluster/wire.h>

namespace cluster {

class GossipQueue {
public:
    void push(const Update& u);
    // Copies up to `max` updates into out, counts each as sent once more and retires those
    // sent `limit` times; returns how many were copied.
    size_t take(Update* out, size_t max, uint32_t limit);
    size_t size() const { return m_count; }

private:
    struct Entry {
        Update update;
        uint32_t sent = 0;
    };
    static constexpr size_t kCapacity = kMaxMembers;
    Entry m_entries[kCapacity];
    size_t m_count = 0;
};

} // namespace cluster

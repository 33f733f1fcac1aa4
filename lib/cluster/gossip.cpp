#include "gossip.h"

namespace cluster {

void GossipQueue::push(const Update& u) {
    for (size_t i = 0; i < m_count; ++i) {
        if (m_entries[i].update.name.view() == u.name.view()) {
            m_entries[i] = Entry { u, 0 };
            return;
        }
    }
    if (m_count < kCapacity) {
        m_entries[m_count++] = Entry { u, 0 };
        return;
    }
    // Full (names churned through evictions): the most repeated entry has done the most good.
    size_t worst = 0;
    for (size_t i = 1; i < m_count; ++i)
        if (m_entries[i].sent > m_entries[worst].sent)
            worst = i;
    m_entries[worst] = Entry { u, 0 };
}

size_t GossipQueue::take(Update* out, size_t max, uint32_t limit) {
    static_assert(kCapacity <= 64, "the chosen set is one 64-bit mask");
    uint64_t chosen = 0;
    size_t n = 0;
    while (n < max && n < m_count) {
        size_t best = m_count;
        for (size_t i = 0; i < m_count; ++i) {
            if (chosen & (uint64_t(1) << i))
                continue;
            if (best == m_count || m_entries[i].sent < m_entries[best].sent)
                best = i;
        }
        if (best == m_count)
            break;
        chosen |= uint64_t(1) << best;
        out[n++] = m_entries[best].update;
        ++m_entries[best].sent;
    }
    // Retire the worn-out entries by compacting in place (order does not matter).
    size_t kept = 0;
    for (size_t i = 0; i < m_count; ++i)
        if (m_entries[i].sent < limit)
            m_entries[kept++] = m_entries[i];
    m_count = kept;
    return n;
}

} // namespace cluster

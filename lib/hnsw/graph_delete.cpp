// Deletion: tombstones, neighbour repair, entry re-election and compaction.
#include <hnsw/index.h>

#include <cstring>

namespace hnsw {

using ktl::Error;
using ktl::Result;

void Index::repair(uint32_t slot, uint32_t level) {
    uint32_t* list = links(slot, level);
    bool dirty = false;
    for (uint32_t i = 1; i <= list[0] && !dirty; ++i)
        dirty = !live(list[i]);
    if (!dirty)
        return;

    // Candidates: the live links, plus the live links of each deleted neighbour (the nodes
    // the deleted one was reaching for us); keep the closest, then re-run Algorithm 4.
    Scratch& s = m_scratch;
    auto& closest = s.m_results;
    const uint32_t keep = closest.capacity() - 1;
    const float* base = vec(slot);
    closest.clear();
    s.m_visited.next_epoch();
    s.m_visited.test_and_set(slot);
    auto consider = [&](uint32_t x) {
        if (!live(x) || s.m_visited.test_and_set(x))
            return;
        closest.push({ distance(s, base, vec(x)), x });
        if (closest.size() > keep)
            closest.pop();
    };
    for (uint32_t i = 1; i <= list[0]; ++i) {
        const uint32_t x = list[i];
        if (live(x)) {
            consider(x);
            continue;
        }
        const uint32_t* second = links(x, level);
        for (uint32_t j = 1; j <= second[0]; ++j)
            consider(second[j]);
    }
    const uint32_t n = drain_sorted(s);
    list[0] = select_neighbors(s, s.m_sorted, n, max_links(level), s.m_selected);
    std::memcpy(list + 1, s.m_selected, sizeof(uint32_t) * list[0]);
}

void Index::elect_entry() {
    // Highest live level, lowest slot on ties: deterministic.
    m_entry = kNone;
    m_max_level = 0;
    for (uint32_t s = 0; s < m_high_water; ++s) {
        if (live(s) && (m_entry == kNone || node(s)->level > m_max_level)) {
            m_entry = s;
            m_max_level = node(s)->level;
        }
    }
}

Result<void> Index::remove(uint64_t id) {
    ++m_version; // an export's cursor no longer holds
    if (!m_records)
        return Error::BadHandle;
    const uint32_t slot = find(id);
    if (slot == kNone)
        return Error::NotFound;
    map_erase(id);
    if (node(slot)->flags == kDeferred) { // not in the graph: nothing links to it
        unchain_deferred(slot);
        --m_count;
        push_free(slot);
        return {};
    }
    node(slot)->flags = kDeleted;
    --m_count;
    ++m_deleted;

    const uint32_t level = node(slot)->level;
    for (uint32_t l = 0; l <= level; ++l) {
        const uint32_t* list = links(slot, l);
        for (uint32_t i = 1; i <= list[0]; ++i) {
            const uint32_t nb = list[i];
            if (!live(nb))
                continue;
            const uint32_t* back = links(nb, l);
            for (uint32_t j = 1; j <= back[0]; ++j) {
                if (back[j] == slot) {
                    repair(nb, l);
                    break;
                }
            }
        }
    }
    if (m_entry == slot)
        elect_entry();
    if (m_params.compact_percent < 100 &&
        uint64_t(m_deleted) * 100 > uint64_t(m_params.compact_percent) * (m_count + m_deleted))
        return compact();
    return {};
}

Result<void> Index::compact() {
    ++m_version; // an export's cursor no longer holds
    if (!m_records)
        return Error::BadHandle;
    if (m_deleted == 0)
        return {};
    for (uint32_t l = 0; l <= kMaxLevel; ++l) {
        bool any = false;
        for (uint32_t s = 0; s < m_high_water; ++s) {
            if (live(s) && node(s)->level >= l) {
                any = true;
                repair(s, l);
            }
        }
        if (!any)
            break;
    }
    for (uint32_t s = 0; s < m_high_water; ++s) {
        NodeHeader* n = node(s);
        if (n->flags != kDeleted)
            continue;
        if (n->upper != kNone)
            m_pool.release(n->upper, n->level);
        push_free(s);
    }
    m_deleted = 0;
    ++m_compactions;
    return {};
}

} // namespace hnsw

// Graph search and construction: Algorithms 1, 2 and 4 of Malkov & Yashunin.
#include <hnsw/index.h>

#include <algorithm>
#include <cstring>

namespace hnsw {

using ktl::Error;
using ktl::Result;

namespace {

// flags == 1: live (Index::kLive); tombstones are traversed but never returned.
inline bool accepts(uint8_t flags, uint64_t id, const Filter* filter) {
    return flags == 1 && (!filter || filter->accept(id, filter->ctx));
}

inline void prefetch(const void* p) { __builtin_prefetch(p, 0, 3); }

inline void prefetch_lines(const void* p, size_t bytes) {
    const char* c = static_cast<const char*>(p);
    for (size_t off = 64; off < bytes; off += 64)
        __builtin_prefetch(c + off, 0, 3);
}

} // namespace

Candidate Index::descend(Scratch& s, const float* q, uint32_t stop) const {
    Candidate cur { distance(s, q, vec(m_entry)), m_entry };
    for (uint32_t level = m_max_level; level > stop; --level) {
        for (bool changed = true; changed;) {
            changed = false;
            const uint32_t* list = links(cur.slot, level);
            const uint32_t n = list[0];
            for (uint32_t i = 1; i <= n; ++i) {
                float d = distance(s, q, vec(list[i]));
                if (d < cur.dist) {
                    cur = { d, list[i] };
                    changed = true;
                }
            }
        }
    }
    return cur;
}

void Index::search_layer(Scratch& s, const float* q, Candidate entry, uint32_t ef, uint32_t level,
                         const Filter* filter) const {
    auto& results = s.m_results;
    auto& candidates = s.m_candidates;
    results.clear();
    candidates.clear();
    s.m_visited.next_epoch();
    s.m_visited.test_and_set(entry.slot);
    candidates.push(entry);
    if (accepts(node(entry.slot)->flags, node(entry.slot)->id, filter))
        results.push(entry);

    while (!candidates.empty()) {
        const Candidate c = candidates.top();
        if (results.size() == ef && !closer(c, results.top()))
            break; // Algorithm 2, line 7: every remaining candidate is farther than W
        candidates.pop();

        // Gather the unvisited neighbours first and prefetch their records, so the memory
        // loads overlap instead of stalling one distance at a time.
        const uint32_t* list = links(c.slot, level);
        const uint32_t n = list[0];
        uint32_t* batch = s.m_batch;
        uint32_t fresh = 0;
        for (uint32_t i = 1; i <= n; ++i) {
            const uint32_t nb = list[i];
            if (s.m_visited.test_and_set(nb))
                continue;
            prefetch(vec(nb));
            batch[fresh++] = nb;
        }
        for (uint32_t i = 0; i < fresh; ++i) {
            const uint32_t nb = batch[i];
            if (i + 1 < fresh)
                prefetch_lines(vec(batch[i + 1]), m_vec_bytes); // all of the next vector
            const Candidate cand { distance(s, q, vec(nb)), nb };
            if (results.size() == ef && !closer(cand, results.top()))
                continue;
            if (candidates.full()) {
                // Entries no closer than W's farthest can never be expanded (W only shrinks
                // towards q once full); drop them, and if tombstones or a filter keep the
                // queue full anyway, keep its closer half.
                if (results.size() == ef) {
                    const Candidate worst = results.top();
                    candidates.retain([&](const Candidate& x) { return closer(x, worst); });
                }
                if (candidates.size() > candidates.capacity() / 2) {
                    std::sort(candidates.data(), candidates.data() + candidates.size(), closer);
                    candidates.truncate(candidates.capacity() / 2); // sorted is a valid min-heap
                }
            }
            candidates.push(cand);
            const NodeHeader* h = node(nb);
            if (accepts(h->flags, h->id, filter)) {
                results.push(cand);
                if (results.size() > ef)
                    results.pop();
            }
        }
    }
}

uint32_t Index::drain_sorted(Scratch& s) const {
    uint32_t n = s.m_results.size();
    for (uint32_t i = n; i-- > 0;)
        s.m_sorted[i] = s.m_results.pop();
    return n;
}

uint32_t Index::select_neighbors(Scratch& s, const Candidate* sorted, uint32_t n, uint32_t m, uint32_t* out) const {
    if (n <= m) {
        for (uint32_t i = 0; i < n; ++i)
            out[i] = sorted[i].slot;
        return n;
    }
    // Keep e only if it is closer to the base than to every neighbour already kept: the
    // kept set then spreads over directions instead of clustering (Algorithm 4).
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n && kept < m; ++i) {
        const float* v = vec(sorted[i].slot);
        bool good = true;
        for (uint32_t j = 0; j < kept; ++j) {
            if (distance(s, v, vec(out[j])) < sorted[i].dist) {
                good = false;
                break;
            }
        }
        if (good)
            out[kept++] = sorted[i].slot;
    }
    return kept;
}

void Index::add_link(uint32_t from, uint32_t to, uint32_t level) {
    uint32_t* list = links(from, level);
    const uint32_t cap = max_links(level);
    if (list[0] < cap) {
        list[++list[0]] = to;
        return;
    }
    // Full: re-select among the current links and the new one.
    Scratch& s = m_scratch;
    const float* base = vec(from);
    uint32_t n = 0;
    for (uint32_t i = 1; i <= list[0]; ++i)
        s.m_sorted[n++] = { distance(s, base, vec(list[i])), list[i] };
    s.m_sorted[n++] = { distance(s, base, vec(to)), to };
    std::sort(s.m_sorted, s.m_sorted + n, closer);
    list[0] = select_neighbors(s, s.m_sorted, n, cap, s.m_selected);
    std::memcpy(list + 1, s.m_selected, sizeof(uint32_t) * list[0]);
}

void Index::link_new_node(uint32_t slot, uint32_t level) {
    Scratch& s = m_scratch;
    const float* q = vec(slot);
    const uint32_t top = level < m_max_level ? level : m_max_level;
    Candidate cur = descend(s, q, top);
    for (uint32_t l = top + 1; l-- > 0;) {
        search_layer(s, q, cur, m_params.ef_construction, l, nullptr);
        const uint32_t n = drain_sorted(s);
        if (n == 0)
            continue; // only tombstones around: the node stays unlinked on this level
        cur = s.m_sorted[0];
        uint32_t* list = links(slot, l);
        // Algorithm 1 selects M neighbours on every level; level 0 lists may grow to 2M.
        list[0] = select_neighbors(s, s.m_sorted, n, m_params.m, list + 1);
        for (uint32_t i = 1; i <= list[0]; ++i)
            add_link(list[i], slot, l);
    }
}

void Index::scan_deferred(Scratch& s, const float* q, uint32_t ef, const Filter* filter) const {
    auto& results = s.m_results;
    uint32_t guard = 0; // (a chain is never longer than the slots)
    for (uint32_t slot = m_deferred_head; slot != kNone && guard < m_high_water; slot = node(slot)->upper, ++guard) {
        const NodeHeader* h = node(slot);
        if (filter && !filter->accept(h->id, filter->ctx))
            continue;
        const Candidate cand { distance(s, q, vec(slot)), slot };
        if (results.size() == ef && !closer(cand, results.top()))
            continue;
        results.push(cand);
        if (results.size() > ef)
            results.pop();
    }
}

Result<size_t> Index::search(std::span<const float> query, uint32_t k, uint32_t ef, std::span<Hit> out,
                             const Filter* filter) {
    return static_cast<const Index*>(this)->search(m_scratch, query, k, ef, out, filter);
}

Result<size_t> Index::search(Scratch& s, std::span<const float> query, uint32_t k, uint32_t ef, std::span<Hit> out,
                             const Filter* filter) const {
    if (!m_records || s.m_slots != m_params.max_elements || s.m_dim != m_params.dim || s.m_m0 != m_params.m0() ||
        s.m_ef_cap < m_params.max_ef || s.m_ef_cap < m_params.ef_construction)
        return Error::BadHandle;
    if (k == 0 || k > m_params.max_ef || ef > m_params.max_ef || out.size() < k)
        return Error::InvalidArgs;
    if (filter && !filter->accept)
        return Error::InvalidArgs;
    TRY_VOID(check_vector(query));
    if (m_entry == kNone && m_deferred == 0)
        return size_t(0);
    if (ef < k)
        ef = k;
    const float* q = query.data();
    if (m_params.metric == Metric::Cosine) {
        store_vector(q, s.m_query);
        q = s.m_query;
    }
    if (m_entry != kNone) {
        Candidate entry = descend(s, q, 0);
        search_layer(s, q, entry, ef, 0, filter);
    } else {
        s.m_results.clear();
    }
    scan_deferred(s, q, ef, filter);
    while (s.m_results.size() > k)
        s.m_results.pop();
    const size_t n = s.m_results.size();
    for (size_t i = n; i-- > 0;) {
        Candidate c = s.m_results.pop();
        out[i] = { node(c.slot)->id, c.dist };
    }
    return n;
}

} // namespace hnsw

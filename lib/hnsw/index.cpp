// Index creation, memory layout, id table, slots, insert and get.
#include <hnsw/index.h>

#include <cstring>

namespace hnsw {

using ktl::Error;
using ktl::Result;

Result<void> Params::validate() const {
    if (dim < 1 || dim > kMaxDim)
        return Error::InvalidArgs;
    if (metric != Metric::L2 && metric != Metric::Cosine && metric != Metric::InnerProduct)
        return Error::InvalidArgs;
    if (m < kMinM || m > kMaxM)
        return Error::InvalidArgs;
    if (ef_construction < 1 || ef_construction > kMaxEf || max_ef < 1 || max_ef > kMaxEf)
        return Error::InvalidArgs;
    if (max_elements < 1 || max_elements > kMaxElements)
        return Error::InvalidArgs;
    if (compact_percent > 100)
        return Error::InvalidArgs;
    return {};
}

struct Index::Layout {
    size_t record_size;
    size_t vec_offset;
    size_t table_size; // power of two >= 2 * max_elements
    uint32_t ef_cap;
    uint32_t result_cap;
    uint32_t candidate_cap;
    uint32_t sorted_cap;
};

Index::Layout Index::layout(const Params& p) {
    Layout l {};
    l.vec_offset = sizeof(NodeHeader) + sizeof(uint32_t) * (1 + p.m0());
    l.record_size = (l.vec_offset + sizeof(float) * p.dim + 7) & ~size_t(7);
    l.table_size = 2;
    while (l.table_size < 2 * size_t(p.max_elements))
        l.table_size *= 2;
    l.ef_cap = p.max_ef > p.ef_construction ? p.max_ef : p.ef_construction;
    l.result_cap = (l.ef_cap > p.m0() ? l.ef_cap : p.m0()) + 1;
    l.candidate_cap = 2 * l.ef_cap + p.m0() + 1;
    l.sorted_cap = l.result_cap;
    return l;
}

size_t Index::scratch_bytes(const Params& p) {
    Layout l = layout(p);
    return 64 + sizeof(uint16_t) * p.max_elements + 8 +
           sizeof(Candidate) * (size_t(l.result_cap) + l.candidate_cap + l.sorted_cap) + 8 +
           2 * (sizeof(uint32_t) * (p.m0() + 1) + 8) + sizeof(float) * p.dim;
}

size_t Index::memory_fixed(const Params& p) {
    Layout l = layout(p);
    return 64 + l.record_size * p.max_elements + sizeof(uint32_t) * l.table_size + scratch_bytes(p) + 8;
}

size_t Index::memory_needed(const Params& p) {
    // P(level >= l) = m^-l, so a node owns 1/(m-1) upper lists on average; allow twice that
    // plus a few top-level blocks.
    size_t list_bytes = sizeof(uint32_t) * (p.m + 1);
    size_t upper = 2 * list_bytes * p.max_elements / (p.m - 1) + 4 * kMaxLevel * list_bytes;
    return memory_fixed(p) + upper;
}

bool Index::carve_scratch(Arena& arena, const Params& p, Scratch& s) {
    Layout l = layout(p);
    auto* marks = arena.allocate_array<uint16_t>(p.max_elements, 64);
    auto* results = arena.allocate_array<Candidate>(l.result_cap);
    auto* candidates = arena.allocate_array<Candidate>(l.candidate_cap);
    auto* sorted = arena.allocate_array<Candidate>(l.sorted_cap);
    auto* selected = arena.allocate_array<uint32_t>(p.m0() + 1);
    auto* batch = arena.allocate_array<uint32_t>(p.m0() + 1);
    auto* query = arena.allocate_array<float>(p.dim);
    if (!marks || !results || !candidates || !sorted || !selected || !batch || !query)
        return false;
    s.m_visited = VisitedList(marks, p.max_elements);
    s.m_results = FixedHeap<true>(results, l.result_cap);
    s.m_candidates = FixedHeap<false>(candidates, l.candidate_cap);
    s.m_sorted = sorted;
    s.m_selected = selected;
    s.m_batch = batch;
    s.m_query = query;
    s.m_distances = 0;
    s.m_slots = p.max_elements;
    s.m_dim = p.dim;
    s.m_m0 = p.m0();
    s.m_ef_cap = l.ef_cap;
    return true;
}

Result<Index> Index::create(const Params& params, std::span<std::byte> memory) {
    TRY_VOID(params.validate());
    Layout l = layout(params);
    Index index;
    index.m_params = params;
    index.m_kernels = best_kernels();
    index.m_dist = params.metric == Metric::L2 ? index.m_kernels.l2 : index.m_kernels.ip;
    index.m_arena = Arena(memory);
    index.m_record_size = l.record_size;
    index.m_vec_offset = l.vec_offset;
    index.m_vec_bytes = sizeof(float) * params.dim;
    index.m_records = static_cast<std::byte*>(index.m_arena.allocate(l.record_size * params.max_elements, 64));
    index.m_table = index.m_arena.allocate_array<uint32_t>(l.table_size);
    if (!index.m_records || !index.m_table || !carve_scratch(index.m_arena, params, index.m_scratch))
        return Error::NoMemory;
    std::memset(index.m_table, 0, sizeof(uint32_t) * l.table_size);
    index.m_table_mask = uint32_t(l.table_size - 1);
    size_t words = index.m_arena.remaining() / sizeof(uint32_t);
    uint32_t* pool = words ? index.m_arena.allocate_array<uint32_t>(words) : nullptr;
    index.m_pool = LinkPool(pool, pool ? words : 0, params.m + 1);
    index.m_rng = Rng(params.seed);
    return static_cast<Index&&>(index);
}

Result<void> Index::set_isa(Isa isa) {
    if (!isa_available(isa))
        return Error::Unsupported;
    m_kernels = kernels_for(isa);
    m_dist = m_params.metric == Metric::L2 ? m_kernels.l2 : m_kernels.ip;
    return {};
}

Result<Scratch> Index::make_scratch(std::span<std::byte> memory) const {
    Arena arena(memory);
    Scratch s;
    if (!carve_scratch(arena, m_params, s))
        return Error::NoMemory;
    return s;
}

// --- id table ---------------------------------------------------------------------------

static uint32_t hash_id(uint64_t id) {
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    id *= 0xc4ceb9fe1a85ec53ull;
    id ^= id >> 33;
    return uint32_t(id);
}

uint32_t Index::find(uint64_t id) const {
    if (!m_table)
        return kNone;
    for (uint32_t i = hash_id(id) & m_table_mask;; i = (i + 1) & m_table_mask) {
        uint32_t v = m_table[i];
        if (v == 0)
            return kNone;
        if (node(v - 1)->id == id)
            return v - 1;
    }
}

void Index::map_insert(uint64_t id, uint32_t slot) {
    uint32_t i = hash_id(id) & m_table_mask;
    while (m_table[i] != 0)
        i = (i + 1) & m_table_mask;
    m_table[i] = slot + 1;
}

void Index::map_erase(uint64_t id) {
    uint32_t i = hash_id(id) & m_table_mask;
    while (m_table[i] != 0 && node(m_table[i] - 1)->id != id)
        i = (i + 1) & m_table_mask;
    if (m_table[i] == 0)
        return;
    // Backward-shift deletion: pull later entries of the probe run into the hole when their
    // home position does not lie cyclically in (hole, position].
    for (uint32_t j = i;;) {
        j = (j + 1) & m_table_mask;
        if (m_table[j] == 0)
            break;
        uint32_t home = hash_id(node(m_table[j] - 1)->id) & m_table_mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            m_table[i] = m_table[j];
            i = j;
        }
    }
    m_table[i] = 0;
}

// --- slots --------------------------------------------------------------------------------

uint32_t Index::take_slot() {
    if (m_free_head != kNone) {
        uint32_t slot = m_free_head;
        m_free_head = uint32_t(node(slot)->id);
        if (m_free_head == kNone)
            m_free_tail = kNone;
        --m_free_count;
        return slot;
    }
    if (m_high_water < m_params.max_elements)
        return m_high_water++;
    return kNone;
}

void Index::untake_slot(uint32_t slot, bool from_free) {
    if (!from_free) {
        --m_high_water;
        return;
    }
    node(slot)->id = m_free_head;
    m_free_head = slot;
    if (m_free_tail == kNone)
        m_free_tail = slot;
    ++m_free_count;
}

void Index::push_free(uint32_t slot) {
    NodeHeader* n = node(slot);
    n->flags = 0;
    n->level = 0;
    n->upper = kNone;
    n->id = kNone;
    if (m_free_tail == kNone)
        m_free_head = slot;
    else
        node(m_free_tail)->id = slot;
    m_free_tail = slot;
    ++m_free_count;
}

// --- vectors ------------------------------------------------------------------------------

Result<void> Index::check_vector(std::span<const float> v) const {
    if (v.size() != m_params.dim)
        return Error::InvalidArgs;
    for (float x : v) {
        // Rejects NaN and infinities too; the bound keeps every sum of products finite.
        if (!(x >= -1e15f && x <= 1e15f))
            return Error::InvalidArgs;
    }
    return {};
}

void Index::store_vector(const float* src, float* dst) const {
    const uint32_t dim = m_params.dim;
    if (m_params.metric != Metric::Cosine) {
        std::memcpy(dst, src, sizeof(float) * dim);
        return;
    }
    float norm2 = m_kernels.dot(src, src, dim);
    float inv = norm2 > 0 ? 1.0f / __builtin_sqrtf(norm2) : 0.0f;
    for (uint32_t i = 0; i < dim; ++i)
        dst[i] = src[i] * inv;
}

// --- insert / get -------------------------------------------------------------------------

uint32_t Index::claim_slot(bool& from_free) {
    if (m_free_head == kNone && m_high_water == m_params.max_elements && m_deleted > 0 && !compact().ok())
        return kNone;
    from_free = m_free_head != kNone;
    return take_slot();
}

void Index::join_graph(uint32_t slot, uint32_t level) {
    if (m_entry != kNone)
        link_new_node(slot, level);
    if (m_entry == kNone || level > m_max_level) {
        m_entry = slot;
        m_max_level = level;
    }
}

bool Index::draw_level(uint32_t& level, uint32_t& upper) {
    const uint64_t rng_state = m_rng.state();
    level = m_rng.level(m_params.m);
    upper = kNone;
    if (level == 0)
        return true;
    upper = m_pool.allocate(level);
    if (upper != kNone)
        return true;
    m_rng.set_state(rng_state); // as if never drawn: the next insert draws the same level
    return false;
}

void Index::place(uint32_t slot, uint64_t id, std::span<const float> vector, uint64_t tag, uint8_t flags,
                  uint32_t level, uint32_t upper) {
    NodeHeader* n = node(slot);
    n->id = id;
    n->upper = upper;
    n->level = uint8_t(level);
    n->flags = flags;
    n->reserved = 0;
    n->tag = tag;
    for (uint32_t l = 0; l <= level; ++l)
        links(slot, l)[0] = 0;
    store_vector(vector.data(), vec(slot));
    map_insert(id, slot);
    ++m_count;
}

Result<void> Index::insert(uint64_t id, std::span<const float> vector, uint64_t tag) {
    ++m_version; // an export's cursor no longer holds
    if (!m_records)
        return Error::BadHandle;
    TRY_VOID(check_vector(vector));
    if (find(id) != kNone)
        return Error::Exists;
    bool from_free = false;
    const uint32_t slot = claim_slot(from_free);
    if (slot == kNone)
        return Error::Full;

    uint32_t level = 0, upper = kNone;
    if (!draw_level(level, upper)) {
        untake_slot(slot, from_free);
        return Error::NoMemory;
    }
    place(slot, id, vector, tag, kLive, level, upper);
    join_graph(slot, level);
    return {};
}

Result<void> Index::upsert(uint64_t id, std::span<const float> vector, uint64_t tag) {
    TRY_VOID(check_vector(vector));
    if (find(id) != kNone)
        TRY_VOID(remove(id));
    return insert(id, vector, tag);
}

// --- deferred linking -----------------------------------------------------------------------

Result<void> Index::upsert_deferred(uint64_t id, std::span<const float> vector, uint64_t tag) {
    ++m_version; // an export's cursor no longer holds
    if (!m_records)
        return Error::BadHandle;
    TRY_VOID(check_vector(vector));
    if (find(id) != kNone)
        TRY_VOID(remove(id));
    bool from_free = false;
    const uint32_t slot = claim_slot(from_free);
    if (slot == kNone)
        return Error::Full;
    place(slot, id, vector, tag, kDeferred, 0, kNone); // (upper: the chain's end)
    if (m_deferred_tail == kNone)
        m_deferred_head = slot;
    else
        node(m_deferred_tail)->upper = slot;
    m_deferred_tail = slot;
    ++m_deferred;
    return {};
}

void Index::unchain_deferred(uint32_t slot) {
    uint32_t prev = kNone;
    for (uint32_t s = m_deferred_head; s != kNone; prev = s, s = node(s)->upper) {
        if (s != slot)
            continue;
        const uint32_t next = node(s)->upper;
        if (prev == kNone)
            m_deferred_head = next;
        else
            node(prev)->upper = next;
        if (m_deferred_tail == slot)
            m_deferred_tail = prev;
        --m_deferred;
        return;
    }
}

Result<uint32_t> Index::link_deferred(uint32_t max) {
    if (!m_records)
        return Error::BadHandle;
    for (uint32_t i = 0; i < max && m_deferred_head != kNone; ++i) {
        ++m_version; // an export's cursor no longer holds
        const uint32_t slot = m_deferred_head;
        NodeHeader* n = node(slot);
        uint32_t level = 0, upper = kNone;
        if (!draw_level(level, upper))
            return Error::NoMemory;
        unchain_deferred(slot); // (the head: no walk)
        n->upper = upper;
        n->level = uint8_t(level);
        n->flags = kLive;
        for (uint32_t l = 0; l <= level; ++l)
            links(slot, l)[0] = 0;
        join_graph(slot, level);
    }
    return m_deferred;
}

BatchResult Index::insert_batch(std::span<const uint64_t> ids, std::span<const float> vectors,
                                const Progress* progress) {
    BatchResult r;
    const size_t dim = m_params.dim;
    if (vectors.size() != ids.size() * dim) {
        r.error = Error::InvalidArgs;
        return r;
    }
    const uint32_t every = progress && progress->every ? progress->every : 1024;
    for (size_t i = 0; i < ids.size(); ++i) {
        auto res = insert(ids[i], vectors.subspan(i * dim, dim));
        if (!res.ok()) {
            r.error = res.error();
            return r;
        }
        ++r.inserted;
        if (progress && progress->report && (r.inserted % every == 0 || r.inserted == ids.size()) &&
            !progress->report(r.inserted, ids.size(), progress->ctx)) {
            r.cancelled = r.inserted < ids.size();
            return r;
        }
    }
    return r;
}

Result<void> Index::get(uint64_t id, std::span<float> out) const {
    if (out.size() != m_params.dim)
        return Error::InvalidArgs;
    uint32_t slot = find(id);
    if (slot == kNone)
        return Error::NotFound;
    std::memcpy(out.data(), vec(slot), sizeof(float) * m_params.dim);
    return {};
}

Result<uint64_t> Index::tag_of(uint64_t id) const {
    uint32_t slot = find(id);
    if (slot == kNone)
        return Error::NotFound;
    return node(slot)->tag;
}

void Index::retag(uint64_t tag) {
    ++m_version; // an export's cursor no longer holds
    for (uint32_t s = 0; s < m_high_water; ++s)
        node(s)->tag = tag;
}

Stats Index::stats() const {
    Stats s;
    s.count = m_count;
    s.deferred = m_deferred;
    s.deleted = m_deleted;
    s.free_slots = m_free_count;
    s.capacity = m_params.max_elements;
    s.levels = m_entry == kNone ? 0 : m_max_level + 1;
    s.compactions = m_compactions;
    s.bytes_used = m_arena.used() - sizeof(uint32_t) * (m_pool.capacity() - m_pool.words_used());
    s.bytes_budget = m_arena.capacity();
    s.distance_computations = m_scratch.m_distances;
    return s;
}

} // namespace hnsw

#pragma once
// HNSW approximate nearest-neighbour index (Malkov & Yashunin, "Efficient and robust
// approximate nearest neighbor search using Hierarchical Navigable Small World graphs",
// TPAMI 2018; algorithm numbers below refer to that paper).
//
// Memory: everything lives in one caller-provided span, carved once by create()/load():
//   [level-0 records][id table][visited marks][heaps + buffers][upper-level link pool ...]
// A level-0 record keeps header, links and vector together for locality:
//   [NodeHeader 24 B][count u32][links u32 x 2M][vector f32 x dim] (rounded up to 8 bytes)
// The header holds, besides the id, a 64-bit tag per vector that the index only keeps (the
// vector store records there the provenance node of the write that stored it): 8 bytes a vector.
// Nothing allocates after creation; search() touches only its Scratch.
//
// Concurrency: mutations (insert/remove/compact) and search() with the internal scratch
// must be serialised by the caller; any number of search(Scratch&, ...) calls, each with
// its own Scratch, may run together between mutations.
#include <cstddef>
#include <cstdint>
#include <span>

#include <hnsw/arena.h>
#include <hnsw/distance.h>
#include <hnsw/heap.h>
#include <hnsw/link_pool.h>
#include <hnsw/params.h>
#include <hnsw/rng.h>
#include <hnsw/visited.h>
#include <ktl/result.h>

namespace hnsw {

// Per-searcher working memory (visited marks, heaps, query buffer).
class Scratch {
public:
    Scratch() = default;
    uint64_t distance_computations() const { return m_distances; }

private:
    friend class Index;
    VisitedList m_visited;
    FixedHeap<true> m_results;     // W: farthest on top, at most ef (+1 while inserting)
    FixedHeap<false> m_candidates; // C: closest on top
    Candidate* m_sorted = nullptr; // W drained in ascending order / pruning candidates
    uint32_t* m_selected = nullptr;
    uint32_t* m_batch = nullptr; // unvisited neighbours of the node being expanded
    float* m_query = nullptr;
    uint64_t m_distances = 0;
    // Shape of the index the scratch was carved for; search() refuses a mismatch.
    uint32_t m_slots = 0;
    uint32_t m_dim = 0;
    uint32_t m_m0 = 0;
    uint32_t m_ef_cap = 0;
};

class Index {
public:
    Index() = default; // empty; usable only as a move target
    Index(Index&&) = default;
    Index& operator=(Index&&) = default;
    Index(const Index&) = delete;
    Index& operator=(const Index&) = delete;

    // Arena bytes that comfortably hold max_elements vectors (upper levels included).
    static size_t memory_needed(const Params& params);
    // Fixed part only: create() fails with NoMemory below this.
    static size_t memory_fixed(const Params& params);
    static ktl::Result<Index> create(const Params& params, std::span<std::byte> memory);

    // Extra scratch for concurrent searchers.
    static size_t scratch_bytes(const Params& params);
    ktl::Result<Scratch> make_scratch(std::span<std::byte> memory) const;

    // Exists if the id is present; Full when no slot is left (after compaction), NoMemory
    // when the upper-level pool is exhausted. On error the contents are unchanged (a
    // compaction the insert triggered may have run).
    // tag: kept with the vector, returned by tag_of(), carried by snapshots.
    ktl::Result<void> insert(uint64_t id, std::span<const float> vector, uint64_t tag = 0);
    // Insert, replacing the vector of an existing id (remove + insert: should the insert
    // fail, e.g. NoMemory, the id is left absent). The tag is the new one.
    ktl::Result<void> upsert(uint64_t id, std::span<const float> vector, uint64_t tag = 0);
    // Deferred linking: the vector is stored and found at once (a search scans the deferred
    // vectors exhaustively beside its graph search, so results are as exact as the graph's or
    // better), and is linked into the graph later by link_deferred(), oldest first. Recovery
    // stores its log tail this way, so the store serves before the graph work is done. Replaces
    // an existing id as upsert() does; Full when no slot is left.
    ktl::Result<void> upsert_deferred(uint64_t id, std::span<const float> vector, uint64_t tag = 0);
    // Links up to `max` deferred vectors (each costs an insert); answers how many stay deferred.
    // NoMemory when the upper-level pool is exhausted (the vector stays deferred, still found).
    ktl::Result<uint32_t> link_deferred(uint32_t max);
    uint32_t deferred() const { return m_deferred; }
    // vectors holds ids.size() * dim floats, row-major.
    BatchResult insert_batch(std::span<const uint64_t> ids, std::span<const float> vectors,
                             const Progress* progress = nullptr);

    // Up to k nearest live ids (ascending distance) into out[0..count); returns count, which
    // is below k when fewer vectors (or fewer filter matches) are found. ef is raised to k.
    // InvalidArgs: wrong query size, non-finite values, k == 0, k or ef above max_ef,
    // out.size() < k.
    ktl::Result<size_t> search(std::span<const float> query, uint32_t k, uint32_t ef, std::span<Hit> out,
                               const Filter* filter = nullptr);
    ktl::Result<size_t> search(Scratch& scratch, std::span<const float> query, uint32_t k, uint32_t ef,
                               std::span<Hit> out, const Filter* filter = nullptr) const;

    // Copies the stored vector (normalised for Cosine).
    ktl::Result<void> get(uint64_t id, std::span<float> out) const;
    bool contains(uint64_t id) const { return find(id) != kNone; }
    // The tag stored with a live id's vector; NotFound when the id is absent.
    ktl::Result<uint64_t> tag_of(uint64_t id) const;
    // Gives every vector the same tag (O(slots)).
    void retag(uint64_t tag);

    // Tombstones the id, repairs the neighbours that linked to it (Algorithm 4 re-run over
    // their remaining links and the deleted node's links), re-elects the entry point, and
    // compacts past compact_percent. The slot is reused after compaction.
    ktl::Result<void> remove(uint64_t id);
    // Unlinks every tombstone from the graph (repairing the lists that pointed at them) and
    // returns their slots and link blocks for reuse.
    ktl::Result<void> compact();

    Stats stats() const;
    const Params& params() const { return m_params; }
    size_t size() const { return m_count; }
    Isa isa() const { return m_kernels.isa; }
    // Selects the distance kernels (e.g. NEON off for a comparison run). Every set gives
    // bit-identical distances, so this changes speed only. Unsupported if not available.
    ktl::Result<void> set_isa(Isa isa);

    // Snapshot (see snapshot.cpp for the format). save() returns the bytes written.
    // snapshot_size() is arithmetic (O(nodes)), not a serialisation.
    size_t snapshot_size() const;
    ktl::Result<size_t> save(std::span<std::byte> out) const;
    // Bytes [offset, offset + out.size()) of the snapshot save() would write (fewer at its end),
    // without building the rest: the pages of an export read in order cost the snapshot's size in
    // all (each resumes where the one before stopped); a page out of order costs the snapshot up
    // to its end.
    // OutOfRange for an offset past the end; returns the bytes written.
    ktl::Result<size_t> save_range(uint64_t offset, std::span<std::byte> out) const;
    // Parameters of a snapshot as it declares them.
    static ktl::Result<Params> peek(std::span<const std::byte> snapshot);
    // The parameters load() gives the index, to size its memory: the snapshot's, with
    // max_elements the capacity the loaded index will have. `capacity` when given (at least the
    // slots the snapshot uses, else OutOfRange); otherwise what the content needs plus room to
    // grow, max(2 x used slots, kLoadMinCapacity), never more than declared: a tiny snapshot
    // that declares a huge capacity costs what it holds.
    static constexpr uint32_t kLoadMinCapacity = 1024;
    static ktl::Result<Params> load_params(std::span<const std::byte> snapshot, uint32_t capacity = 0);
    // Truncated / Corrupt / Unsupported for bad input, never a crash. `capacity` as for
    // load_params(); memory must hold memory_needed(load_params(snapshot, capacity)).
    static ktl::Result<Index> load(std::span<const std::byte> snapshot, std::span<std::byte> memory,
                                   uint32_t capacity = 0);

private:
    struct NodeHeader {
        uint64_t id;    // free slots: next free slot (kNone ends the queue)
        uint32_t upper; // LinkPool block for levels 1..level, kNone when level == 0
        uint8_t level;
        uint8_t flags;
        uint16_t reserved;
        uint64_t tag; // the caller's word for this vector (insert's tag)
    };
    static_assert(sizeof(NodeHeader) == 24);
    static constexpr uint8_t kLive = 1;
    static constexpr uint8_t kDeleted = 2;
    // Stored, not in the graph (upsert_deferred): level 0, no links, nobody links to it; its
    // `upper` chains the deferred vectors in the order they are to be linked.
    static constexpr uint8_t kDeferred = 4;

    struct Layout;
    static Layout layout(const Params& params);
    static bool carve_scratch(Arena& arena, const Params& params, Scratch& out);

    NodeHeader* node(uint32_t slot) { return reinterpret_cast<NodeHeader*>(m_records + slot * m_record_size); }
    const NodeHeader* node(uint32_t slot) const {
        return reinterpret_cast<const NodeHeader*>(m_records + slot * m_record_size);
    }
    // [count, links...] of a node at a level.
    uint32_t* links(uint32_t slot, uint32_t level) {
        if (level == 0)
            return reinterpret_cast<uint32_t*>(m_records + slot * m_record_size + sizeof(NodeHeader));
        return m_pool.list(node(slot)->upper, level);
    }
    const uint32_t* links(uint32_t slot, uint32_t level) const {
        if (level == 0)
            return reinterpret_cast<const uint32_t*>(m_records + slot * m_record_size + sizeof(NodeHeader));
        return m_pool.list(node(slot)->upper, level);
    }
    float* vec(uint32_t slot) { return reinterpret_cast<float*>(m_records + slot * m_record_size + m_vec_offset); }
    const float* vec(uint32_t slot) const {
        return reinterpret_cast<const float*>(m_records + slot * m_record_size + m_vec_offset);
    }
    uint32_t max_links(uint32_t level) const { return level == 0 ? m_params.m0() : m_params.m; }
    bool live(uint32_t slot) const { return node(slot)->flags == kLive; }

    // id table (open addressing, linear probing, backward-shift erase); values are slot + 1.
    uint32_t find(uint64_t id) const;
    void map_insert(uint64_t id, uint32_t slot);
    void map_erase(uint64_t id);

    // Takes a slot for a new id (compacting first when only tombstones are left to reuse):
    // kNone when the index is full. `from_free` says where it came from (untake_slot()).
    uint32_t claim_slot(bool& from_free);
    // A new node's level and its upper-level link block (kNone at level 0); false when the pool
    // has no block left (NoMemory; the generator is as it was).
    bool draw_level(uint32_t& level, uint32_t& upper);
    // A live node with empty lists enters the graph: linked from the entry point (Algorithm 1), and
    // the entry point itself when the graph was empty or its level is the highest.
    void join_graph(uint32_t slot, uint32_t level);
    // Fills a claimed slot's header and vector and maps the id (the caller sets up its links).
    void place(uint32_t slot, uint64_t id, std::span<const float> vector, uint64_t tag, uint8_t flags, uint32_t level,
               uint32_t upper);
    // Takes a deferred vector out of the chain (remove()).
    void unchain_deferred(uint32_t slot);
    // Adds a deferred vector's exhaustive distances to the search's W (at most ef kept).
    void scan_deferred(Scratch& s, const float* q, uint32_t ef, const Filter* filter) const;
    // Free-slot FIFO threaded through NodeHeader::id.
    uint32_t take_slot();
    void untake_slot(uint32_t slot, bool from_free);
    void push_free(uint32_t slot);

    ktl::Result<void> check_vector(std::span<const float> v) const;
    // Copies (normalising for Cosine) into dst.
    void store_vector(const float* src, float* dst) const;
    float distance(Scratch& s, const float* a, const float* b) const {
        ++s.m_distances;
        return m_dist(a, b, m_params.dim);
    }

    // Algorithm 2 from one entry; leaves W in s.m_results. Only live nodes passing the
    // filter enter W; tombstones and filtered nodes are traversed.
    void search_layer(Scratch& s, const float* q, Candidate entry, uint32_t ef, uint32_t level,
                      const Filter* filter) const;
    // Greedy descent (ef = 1) from the entry point down to level `stop` + 1.
    Candidate descend(Scratch& s, const float* q, uint32_t stop) const;
    // Drains W into s.m_sorted in ascending order; returns the count.
    uint32_t drain_sorted(Scratch& s) const;
    // Algorithm 4 (without extension or kept pruned links) over sorted candidates.
    uint32_t select_neighbors(Scratch& s, const Candidate* sorted, uint32_t n, uint32_t m, uint32_t* out) const;
    void add_link(uint32_t from, uint32_t to, uint32_t level);
    void link_new_node(uint32_t slot, uint32_t level);
    // Rebuilds the list of `slot` at `level` without tombstones (graph_delete.cpp).
    void repair(uint32_t slot, uint32_t level);
    void elect_entry();
    // Serialises into out (or only counts with out == nullptr); returns the size.
    size_t write_snapshot(uint8_t* out, size_t capacity, bool* overflow) const;
    // The 116-byte header of a snapshot of `total` bytes (snapshot.cpp).
    void write_header(uint8_t* out, uint64_t total) const;
    // Payload bytes of each section (snapshot_range.cpp).
    struct SectionSizes {
        uint64_t node, tomb, free;
    };
    SectionSizes section_sizes() const;
    uint64_t node_record_bytes(uint32_t slot) const;
    // Where the last save_range() stopped in the NODE section, so that the next page of an export
    // read in order starts there instead of walking (and CRC-ing) every record before it: a paged
    // export then costs the snapshot's size once, not once a page. Valid while m_version is the
    // one it was taken at; one exporter at a time uses it (m_cursor_busy), another does without.
    struct ExportCursor {
        uint64_t version = ~0ull; // m_version when taken (~0: none)
        uint64_t pos = 0;         // where the NODE record of `slot` starts in the snapshot
        uint32_t slot = 0;
        uint32_t crc = 0; // the NODE section's CRC over its bytes before pos
        SectionSizes sizes {};
    };
    template <typename Writer>
    void emit_node(Writer& w, uint32_t slot) const; // snapshot_node.h

    Params m_params {};
    Kernels m_kernels {};
    DistanceFn m_dist = nullptr;
    std::byte* m_records = nullptr;
    size_t m_record_size = 0;
    size_t m_vec_offset = 0;
    size_t m_vec_bytes = 0;
    uint32_t* m_table = nullptr;
    uint32_t m_table_mask = 0;
    LinkPool m_pool;
    Scratch m_scratch;
    Rng m_rng;
    Arena m_arena;
    uint32_t m_entry = kNone;
    uint32_t m_max_level = 0;
    uint32_t m_high_water = 0; // slots [0, high_water) have been used
    uint32_t m_count = 0;
    uint32_t m_deleted = 0;
    uint32_t m_free_head = kNone;
    uint32_t m_free_tail = kNone;
    uint32_t m_free_count = 0;
    uint32_t m_compactions = 0;
    uint32_t m_deferred = 0; // counted in m_count too
    uint32_t m_deferred_head = kNone;
    uint32_t m_deferred_tail = kNone;
    uint64_t m_version = 0; // bumped by every mutation (insert, remove, compact, retag)
    mutable ExportCursor m_cursor;
    mutable uint8_t m_cursor_busy = 0;
};

} // namespace hnsw

// Snapshot save/load. Every integer is little-endian and floats are stored as their IEEE-754
// bits, so a snapshot loads identically on x86_64 and AArch64.
//
//   header (116 bytes)
//     0  magic "BSLTHNSW"          8  u32 version (3 with deferred nodes, else 2; 1 is read)
//    12  u32 endian tag 0x01020304
//    16  u32 header size (116)    20  u32 section count (3) 24 u64 total snapshot size
//    32  params: dim, metric, m, ef_construction, max_ef, max_elements, compact_percent,
//        reserved (u32 each), 64 seed (u64)
//    72  state: rng state (u64), 80 high_water, count, deleted, free_count, 96 entry,
//        100 max_level, compactions, reserved (u32 each)
//   112  u32 CRC-32 of bytes [0, 112)
//   sections, in this order: "NODE", "TOMB", "FREE", each
//     u32 tag, u64 payload size, payload, u32 CRC-32 of tag + size + payload
//   NODE: per slot below high_water: u8 flags (0 free, 1 live, 2 deleted, 4 deferred: version 3,
//         level 0 and no links, counted in the header's count, linked later); unless free:
//         u8 level, u16 0, u64 id, u64 tag (version 2; version 1 has none and loads as 0),
//         per level 0..level: u32 count + count u32 links, then dim f32
//   TOMB: u32 slots of the deleted nodes, ascending (must match the NODE flags)
//   FREE: u32 slots of the free queue, head first
// load() checks CRCs first, then every structural invariant the search relies on (link
// targets in range, not free, of a high enough level; counts within bounds; finite vectors;
// unique live ids), so corrupt input gives an error, never a wild access.
#include <hnsw/byte_io.h>
#include <hnsw/crc32.h>
#include <hnsw/index.h>
#include <hnsw/snapshot_node.h>

#include <bit>
#include <cstring>

namespace hnsw {

using ktl::Error;
using ktl::Result;

namespace {

constexpr uint8_t kMagic[8] = { 'B', 'S', 'L', 'T', 'H', 'N', 'S', 'W' };
constexpr uint32_t kVersion = 2;
constexpr uint32_t kDeferredVersion = 3; // a snapshot that holds deferred nodes (flag 4)
constexpr uint32_t kUntaggedVersion = 1; // before per-vector tags: still loaded
constexpr uint32_t kEndianTag = 0x01020304;
constexpr size_t kHeaderSize = 116;
constexpr uint32_t kSectionCount = 3;
constexpr uint32_t kTagNode = 0x45444f4e; // "NODE"
constexpr uint32_t kTagTomb = 0x424d4f54; // "TOMB"
constexpr uint32_t kTagFree = 0x45455246; // "FREE"


struct Header {
    Params params;
    uint64_t rng_state;
    uint32_t high_water, count, deleted, free_count, entry, max_level, compactions;
    uint64_t total_size;
    uint32_t version;
};

Result<Header> parse_header(std::span<const std::byte> snapshot) {
    if (snapshot.size() < kHeaderSize)
        return Error::Truncated;
    const auto* data = reinterpret_cast<const uint8_t*>(snapshot.data());
    if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
        return Error::Corrupt;
    ByteReader r(data + 8, kHeaderSize - 8);
    const uint32_t version = r.u32();
    const uint32_t tag = r.u32();
    if (tag != kEndianTag)
        return Error::Unsupported;
    if (version != kVersion && version != kUntaggedVersion && version != kDeferredVersion)
        return Error::Unsupported;
    if (r.u32() != kHeaderSize || r.u32() != kSectionCount)
        return Error::Corrupt;
    Header h {};
    h.version = version;
    h.total_size = r.u64();
    Params& p = h.params;
    p.dim = r.u32();
    const uint32_t metric = r.u32();
    p.metric = Metric(uint8_t(metric));
    p.m = r.u32();
    p.ef_construction = r.u32();
    p.max_ef = r.u32();
    p.max_elements = r.u32();
    p.compact_percent = r.u32();
    const uint32_t reserved = r.u32();
    p.seed = r.u64();
    h.rng_state = r.u64();
    h.high_water = r.u32();
    h.count = r.u32();
    h.deleted = r.u32();
    h.free_count = r.u32();
    h.entry = r.u32();
    h.max_level = r.u32();
    h.compactions = r.u32();
    const uint32_t reserved2 = r.u32();
    const uint32_t crc = r.u32();
    if (r.failed() || crc != crc32(0, data, kHeaderSize - 4))
        return Error::Corrupt;
    if (metric > 2 || reserved != 0 || reserved2 != 0 || !p.validate().ok())
        return Error::Corrupt;
    if (h.total_size < kHeaderSize)
        return Error::Corrupt;
    if (snapshot.size() < h.total_size)
        return Error::Truncated;
    if (snapshot.size() > h.total_size)
        return Error::Corrupt;
    return h;
}

// Checks the section framing and CRC; on success `payload` reads exactly the payload.
Result<ByteReader> open_section(ByteReader& r, uint32_t expected_tag) {
    const uint8_t* start = r.here();
    const uint32_t tag = r.u32();
    const uint64_t size = r.u64();
    if (r.failed())
        return Error::Truncated;
    if (tag != expected_tag)
        return Error::Corrupt;
    if (size > r.remaining() || r.remaining() - size < 4)
        return Error::Truncated;
    ByteReader payload(r.here(), size_t(size));
    r.skip(size_t(size));
    const uint32_t crc = r.u32();
    if (crc != crc32(0, start, size_t(12 + size)))
        return Error::Corrupt;
    return payload;
}

} // namespace

void Index::write_header(uint8_t* out, uint64_t total) const {
    ByteWriter w(out, kHeaderSize);
    const Stats st = stats();
    w.bytes(kMagic, sizeof(kMagic));
    // (A snapshot without deferred nodes stays readable by a build that knows version 2 only.)
    w.u32(m_deferred > 0 ? kDeferredVersion : kVersion);
    w.u32(kEndianTag);
    w.u32(kHeaderSize);
    w.u32(kSectionCount);
    w.u64(total);
    w.u32(m_params.dim);
    w.u32(uint32_t(m_params.metric));
    w.u32(m_params.m);
    w.u32(m_params.ef_construction);
    w.u32(m_params.max_ef);
    w.u32(m_params.max_elements);
    w.u32(m_params.compact_percent);
    w.u32(0);
    w.u64(m_params.seed);
    w.u64(m_rng.state());
    w.u32(m_high_water);
    w.u32(st.count);
    w.u32(st.deleted);
    w.u32(st.free_slots);
    w.u32(m_entry);
    w.u32(m_max_level);
    w.u32(st.compactions);
    w.u32(0);
    w.u32(crc32(0, out, kHeaderSize - 4));
}

size_t Index::write_snapshot(uint8_t* out, size_t capacity, bool* overflow) const {
    ByteWriter w(out, capacity);
    uint8_t header[kHeaderSize];
    write_header(header, snapshot_size());
    w.bytes(header, kHeaderSize);

    auto section = [&](uint32_t tag, auto&& body) {
        const size_t start = w.pos();
        w.u32(tag);
        w.u64(0);
        body();
        w.patch64(start + 4, w.pos() - start - 12);
        w.u32(w.crc(start));
    };
    section(kTagNode, [&] {
        for (uint32_t s = 0; s < m_high_water; ++s)
            emit_node(w, s);
    });
    section(kTagTomb, [&] {
        for (uint32_t s = 0; s < m_high_water; ++s)
            if (node(s)->flags == kDeleted)
                w.u32(s);
    });
    section(kTagFree, [&] {
        for (uint32_t s = m_free_head; s != kNone; s = uint32_t(node(s)->id))
            w.u32(s);
    });
    if (overflow)
        *overflow = w.overflow();
    return w.pos();
}

size_t Index::snapshot_size() const {
    if (!m_records)
        return 0;
    const SectionSizes p = section_sizes();
    return kHeaderSize + 3 * 16 + p.node + p.tomb + p.free; // each section: tag, size, payload, CRC
}

Result<size_t> Index::save(std::span<std::byte> out) const {
    if (!m_records)
        return Error::BadHandle;
    const size_t size = snapshot_size();
    if (out.size() < size)
        return Error::OutOfRange;
    bool overflow = false;
    if (write_snapshot(reinterpret_cast<uint8_t*>(out.data()), size, &overflow) != size || overflow)
        return Error::OutOfRange;
    return size;
}

Result<Params> Index::peek(std::span<const std::byte> snapshot) {
    Header h = TRY(parse_header(snapshot));
    return h.params;
}

Result<Params> Index::load_params(std::span<const std::byte> snapshot, uint32_t capacity) {
    const Header h = TRY(parse_header(snapshot));
    Params p = h.params;
    if (h.high_water > p.max_elements)
        return Error::Corrupt;
    if (capacity != 0) {
        if (capacity < h.high_water || capacity > kMaxElements)
            return Error::OutOfRange;
        p.max_elements = capacity;
    } else {
        const uint64_t roomy = 2ull * h.high_water > kLoadMinCapacity ? 2ull * h.high_water : kLoadMinCapacity;
        if (roomy < p.max_elements)
            p.max_elements = static_cast<uint32_t>(roomy);
    }
    if (!p.validate())
        return Error::Corrupt;
    return p;
}

Result<Index> Index::load(std::span<const std::byte> snapshot, std::span<std::byte> memory, uint32_t capacity) {
    const Header h = TRY(parse_header(snapshot));
    const Params p = TRY(load_params(snapshot, capacity));
    if (h.high_water > p.max_elements || h.max_level > kMaxLevel ||
        uint64_t(h.count) + h.deleted + h.free_count != h.high_water)
        return Error::Corrupt;
    if (h.entry != kNone && h.entry >= h.high_water)
        return Error::Corrupt;

    Index index = TRY(create(p, memory));
    ByteReader r(reinterpret_cast<const uint8_t*>(snapshot.data()) + kHeaderSize, snapshot.size() - kHeaderSize);
    ByteReader nodes = TRY(open_section(r, kTagNode));
    ByteReader tombs = TRY(open_section(r, kTagTomb));
    ByteReader frees = TRY(open_section(r, kTagFree));
    if (r.remaining() != 0)
        return Error::Corrupt;

    // Nodes.
    uint32_t live_count = 0, deleted_count = 0, free_count = 0, deferred_count = 0;
    index.m_high_water = h.high_water;
    for (uint32_t s = 0; s < h.high_water; ++s) {
        NodeHeader* n = index.node(s);
        n->flags = nodes.u8();
        n->reserved = 0;
        n->upper = kNone;
        n->level = 0;
        n->id = kNone;
        n->tag = 0;
        if (n->flags == 0) {
            ++free_count;
            continue;
        }
        if (n->flags != kLive && n->flags != kDeleted && (n->flags != kDeferred || h.version < kDeferredVersion))
            return Error::Corrupt;
        const uint32_t level = nodes.u8();
        const uint16_t reserved = nodes.u16();
        n->id = nodes.u64();
        n->tag = h.version >= 2 ? nodes.u64() : 0;
        if (nodes.failed())
            return Error::Corrupt;
        if (level > kMaxLevel || reserved != 0 || (n->flags == kDeferred && level != 0))
            return Error::Corrupt;
        n->level = uint8_t(level);
        if (level > 0) {
            n->upper = index.m_pool.allocate(level);
            if (n->upper == kNone)
                return Error::NoMemory;
        }
        for (uint32_t l = 0; l <= level; ++l) {
            uint32_t* list = index.links(s, l);
            const uint32_t count = nodes.u32();
            if (count > index.max_links(l) || (n->flags == kDeferred && count != 0))
                return Error::Corrupt;
            list[0] = count;
            nodes.u32s(list + 1, count); // one copy, then checked
            for (uint32_t i = 1; i <= count; ++i)
                if (list[i] >= h.high_water)
                    return Error::Corrupt;
        }
        float* v = index.vec(s);
        if constexpr (std::endian::native == std::endian::little)
            nodes.take(v, 4ull * p.dim); // the stored bits are the format's bytes
        else
            for (uint32_t i = 0; i < p.dim; ++i)
                v[i] = nodes.f32();
        for (uint32_t i = 0; i < p.dim; ++i)
            if (!(v[i] >= -1e15f && v[i] <= 1e15f))
                return Error::Corrupt;
        if (nodes.failed())
            return Error::Corrupt;
        if (n->flags == kLive || n->flags == kDeferred) {
            if (index.find(n->id) != kNone)
                return Error::Corrupt; // duplicate live id
            index.map_insert(n->id, s);
            if (n->flags == kDeferred) { // chained in slot order
                if (index.m_deferred_tail == kNone)
                    index.m_deferred_head = s;
                else
                    index.node(index.m_deferred_tail)->upper = s;
                index.m_deferred_tail = s;
                ++deferred_count;
            } else {
                ++live_count;
            }
        } else {
            ++deleted_count;
        }
    }
    if (nodes.failed() || nodes.remaining() != 0)
        return Error::Corrupt;
    if (live_count + deferred_count != h.count || deleted_count != h.deleted || free_count != h.free_count)
        return Error::Corrupt;
    if ((live_count == 0) != (h.entry == kNone))
        return Error::Corrupt;

    // Links: every target must be a used slot present on that level.
    for (uint32_t s = 0; s < h.high_water; ++s) {
        const NodeHeader* n = index.node(s);
        if (n->flags == 0)
            continue;
        for (uint32_t l = 0; l <= n->level; ++l) {
            const uint32_t* list = index.links(s, l);
            for (uint32_t i = 1; i <= list[0]; ++i) {
                const NodeHeader* t = index.node(list[i]);
                if (t->flags == 0 || t->flags == kDeferred || t->level < l)
                    return Error::Corrupt;
            }
        }
    }
    if (h.entry != kNone) {
        const NodeHeader* e = index.node(h.entry);
        if (e->flags != kLive || e->level != h.max_level)
            return Error::Corrupt;
    } else if (h.max_level != 0) {
        return Error::Corrupt;
    }

    // Tombstones: exactly the deleted slots, ascending.
    for (uint32_t s = 0; s < h.high_water; ++s) {
        if (index.node(s)->flags == kDeleted && tombs.u32() != s)
            return Error::Corrupt;
    }
    if (tombs.failed() || tombs.remaining() != 0)
        return Error::Corrupt;

    // Free queue: each free slot exactly once (reserved marks queued slots while checking).
    for (uint32_t i = 0; i < h.free_count; ++i) {
        const uint32_t s = frees.u32();
        if (frees.failed() || s >= h.high_water)
            return Error::Corrupt;
        NodeHeader* n = index.node(s);
        if (n->flags != 0 || n->reserved != 0)
            return Error::Corrupt;
        n->reserved = 1;
        index.push_free(s);
    }
    if (frees.remaining() != 0)
        return Error::Corrupt;
    for (uint32_t s = 0; s < h.high_water; ++s)
        index.node(s)->reserved = 0;

    index.m_count = h.count;
    index.m_deleted = h.deleted;
    index.m_deferred = deferred_count;
    index.m_entry = h.entry;
    index.m_max_level = h.max_level;
    index.m_compactions = h.compactions;
    index.m_rng.set_state(h.rng_state);
    return static_cast<Index&&>(index);
}

} // namespace hnsw

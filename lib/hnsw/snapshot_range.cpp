// A window of a snapshot (snapshot.cpp has the format) without building the whole: an export of
// a collection larger than any buffer the caller has is paged, and the pages together must not
// cost a serialisation of everything before each of them (a checkpoint of 100,000 vectors is 500
// pages: that was seconds of held writes). The NODE section's CRC covers all of it, so its
// records are emitted (copied only where the window is) and CRC'd from the first on, and the
// index keeps where a window stopped (slot, offset, CRC so far): the next window of the same
// export starts there.
#include <hnsw/crc32.h>
#include <hnsw/index.h>
#include <hnsw/snapshot_node.h>

#include <bit>
#include <cstring>

namespace hnsw {

using ktl::Error;
using ktl::Result;

namespace {

constexpr uint64_t kHeaderBytes = 116;
constexpr uint64_t kSectionFrame = 16; // u32 tag + u64 size before the payload, u32 CRC after
constexpr uint32_t kTagNode = 0x45444f4e;
constexpr uint32_t kTagTomb = 0x424d4f54;
constexpr uint32_t kTagFree = 0x45455246;

// Counts every byte of the stream and copies those in [lo, hi) to out; while a section is
// open, also its CRC.
class RangeWriter {
public:
    RangeWriter(uint8_t* out, uint64_t lo, uint64_t hi) : m_out(out), m_lo(lo), m_hi(hi) {}

    void bytes(const void* src, uint64_t n) {
        const auto* p = static_cast<const uint8_t*>(src);
        if (m_crc_on)
            m_crc = crc32(m_crc, p, n);
        uint64_t a = m_pos > m_lo ? m_pos : m_lo;
        uint64_t b = m_pos + n < m_hi ? m_pos + n : m_hi;
        if (a < b)
            std::memcpy(m_out + (a - m_lo), p + (a - m_pos), b - a);
        m_pos += n;
    }
    void u8(uint8_t v) { bytes(&v, 1); }
    void u16(uint16_t v) { le(v, 2); }
    void u32(uint32_t v) { le(v, 4); }
    void u64(uint64_t v) { le(v, 8); }
    void f32(float v) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        u32(bits);
    }
    void skip(uint64_t n) { m_pos += n; }
    // Whether [pos + at, pos + at + n) touches the window.
    bool wants(uint64_t n, uint64_t at = 0) const { return m_pos + at < m_hi && m_pos + at + n > m_lo; }
    uint64_t pos() const { return m_pos; }
    void seek(uint64_t to) { m_pos = to; }
    void crc_begin() { crc_resume(0); }
    // Goes on with a CRC a previous window left off (crc_state()).
    void crc_resume(uint32_t crc) {
        m_crc_on = true;
        m_crc = crc;
    }
    uint32_t crc_state() const { return m_crc; }
    uint32_t crc_end() {
        m_crc_on = false;
        return m_crc;
    }

private:
    void le(uint64_t v, int n) {
        uint8_t b[8];
        for (int i = 0; i < n; ++i)
            b[i] = uint8_t(v >> (8 * i));
        bytes(b, uint64_t(n));
    }

    uint8_t* m_out;
    uint64_t m_lo, m_hi;
    uint64_t m_pos = 0;
    bool m_crc_on = false;
    uint32_t m_crc = 0;
};

} // namespace

uint64_t Index::node_record_bytes(uint32_t s) const {
    const NodeHeader* n = node(s);
    if (n->flags == 0)
        return 1;
    uint64_t bytes = 1 + 1 + 2 + 8 + 8 + 4ull * m_params.dim;
    for (uint32_t l = 0; l <= n->level; ++l)
        bytes += 4 + 4ull * links(s, l)[0];
    return bytes;
}

Index::SectionSizes Index::section_sizes() const {
    SectionSizes sizes { 0, 0, 0 };
    for (uint32_t s = 0; s < m_high_water; ++s) {
        sizes.node += node_record_bytes(s);
        if (node(s)->flags == kDeleted)
            sizes.tomb += 4;
    }
    uint32_t guard = 0;
    for (uint32_t s = m_free_head; s != kNone && guard <= m_high_water; s = uint32_t(node(s)->id), ++guard)
        sizes.free += 4;
    return sizes;
}

Result<size_t> Index::save_range(uint64_t offset, std::span<std::byte> out) const {
    if (!m_records)
        return Error::BadHandle;
    // Readers may export concurrently: the one that finds the cursor free uses and updates it.
    struct Claim {
        uint8_t& busy;
        const bool owned;
        explicit Claim(uint8_t& b) : busy(b), owned(__atomic_exchange_n(&b, uint8_t(1), __ATOMIC_ACQUIRE) == 0) {}
        ~Claim() {
            if (owned)
                __atomic_store_n(&busy, uint8_t(0), __ATOMIC_RELEASE);
        }
    } claim(m_cursor_busy);
    const bool resume = claim.owned && m_cursor.version == m_version && offset >= m_cursor.pos;
    const SectionSizes sizes = resume ? m_cursor.sizes : section_sizes();
    const uint64_t total = kHeaderBytes + 3 * kSectionFrame + sizes.node + sizes.tomb + sizes.free;
    if (offset > total)
        return Error::OutOfRange;
    const uint64_t hi = out.size() < total - offset ? offset + out.size() : total;
    RangeWriter w(reinterpret_cast<uint8_t*>(out.data()), offset, hi);

    // NODE: every record from the first (or the cursor) is emitted, CRC'd as it goes, up to the
    // first one past the window; the cursor keeps where that was for the next page.
    const uint64_t node_end = kHeaderBytes + 12 + sizes.node;
    uint32_t s = 0;
    if (resume) {
        w.seek(m_cursor.pos);
        w.crc_resume(m_cursor.crc);
        s = m_cursor.slot;
    } else {
        uint8_t header[kHeaderBytes];
        write_header(header, total);
        w.bytes(header, kHeaderBytes);
        w.crc_begin();
        w.u32(kTagNode);
        w.u64(sizes.node);
    }
    // The last record emitted may run past the window: the next page starts at that record.
    ExportCursor at { m_version, w.pos(), s, w.crc_state(), sizes };
    for (; s < m_high_water && w.pos() < hi; ++s) {
        at = { m_version, w.pos(), s, w.crc_state(), sizes };
        emit_node(w, s);
    }
    if (claim.owned)
        m_cursor = w.pos() > hi ? at : ExportCursor { m_version, w.pos(), s, w.crc_state(), sizes };
    if (s < m_high_water)
        return static_cast<size_t>(hi - offset); // the window ends inside NODE
    if (w.pos() != node_end) {
        if (claim.owned)
            m_cursor.version = ~0ull;
        return Error::Corrupt; // the sizes disagree with the records: never expected
    }
    w.u32(w.crc_end());

    // A section entirely outside the window is skipped; one in it is written whole (the CRC needs
    // every byte; TOMB and FREE are 4 bytes a slot at most).
    auto section = [&](uint32_t tag, uint64_t payload, auto&& body) {
        if (!w.wants(kSectionFrame + payload)) {
            w.skip(kSectionFrame + payload);
            return;
        }
        const uint64_t start = w.pos();
        w.crc_begin();
        w.u32(tag);
        w.u64(payload);
        body();
        w.seek(start + 12 + payload);
        w.u32(w.crc_end());
    };
    section(kTagTomb, sizes.tomb, [&] {
        for (uint32_t t = 0; t < m_high_water; ++t)
            if (node(t)->flags == kDeleted)
                w.u32(t);
    });
    section(kTagFree, sizes.free, [&] {
        uint32_t guard = 0;
        for (uint32_t t = m_free_head; t != kNone && guard <= m_high_water; t = uint32_t(node(t)->id), ++guard)
            w.u32(t);
    });
    return static_cast<size_t>(hi - offset);
}

} // namespace hnsw

// A window of a snapshot (snapshot.cpp has the format) without building the whole: an export of
// a collection larger than any buffer the caller has is paged, and each page must not cost a
// serialisation of everything before it. Record sizes are known from the graph, so records
// outside the window are skipped by size; only a section whose CRC lies in the window is read in
// full (the CRC covers the section).
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
    void crc_begin() {
        m_crc_on = true;
        m_crc = 0;
    }
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
    const SectionSizes sizes = section_sizes();
    const uint64_t total = kHeaderBytes + 3 * kSectionFrame + sizes.node + sizes.tomb + sizes.free;
    if (offset > total)
        return Error::OutOfRange;
    const uint64_t hi = out.size() < total - offset ? offset + out.size() : total;
    RangeWriter w(reinterpret_cast<uint8_t*>(out.data()), offset, hi);

    uint8_t header[kHeaderBytes];
    write_header(header, total);
    w.bytes(header, kHeaderBytes);

    // A section entirely outside the window is skipped; one whose CRC is in it is written whole
    // (the CRC needs every byte); otherwise its records outside the window are skipped by size.
    auto section = [&](uint32_t tag, uint64_t payload, auto&& body) {
        const uint64_t start = w.pos();
        const bool crc_wanted = w.wants(4, 12 + payload);
        if (!crc_wanted && !w.wants(kSectionFrame + payload)) {
            w.skip(kSectionFrame + payload);
            return;
        }
        w.crc_begin();
        w.u32(tag);
        w.u64(payload);
        body(crc_wanted);
        w.seek(start + 12 + payload); // where the payload ends, whatever was skipped
        w.u32(w.crc_end());
    };
    section(kTagNode, sizes.node, [&](bool whole) {
        for (uint32_t s = 0; s < m_high_water; ++s) {
            const uint64_t bytes = node_record_bytes(s);
            if (!whole && !w.wants(bytes)) {
                w.skip(bytes);
                continue;
            }
            emit_node(w, s);
        }
    });
    section(kTagTomb, sizes.tomb, [&](bool) {
        for (uint32_t s = 0; s < m_high_water; ++s)
            if (node(s)->flags == kDeleted)
                w.u32(s);
    });
    section(kTagFree, sizes.free, [&](bool) {
        uint32_t guard = 0;
        for (uint32_t s = m_free_head; s != kNone && guard <= m_high_water; s = uint32_t(node(s)->id), ++guard)
            w.u32(s);
    });
    return static_cast<size_t>(hi - offset);
}

} // namespace hnsw

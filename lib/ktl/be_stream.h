#pragma once
// Big-endian writer and reader over a bounded span, for the network formats (the cluster's
// membership datagrams, Raft's messages). Once a write does not fit, or a read would run past the
// end, the stream has failed for good: every later call does nothing and ok() stays false, so a
// format is written or read straight through and checked once at the end.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace ktl {

class BeWriter {
public:
    explicit BeWriter(std::span<uint8_t> out) : m_out(out) {}
    void u8(uint8_t v) { bytes(&v, 1); }
    void u16(uint16_t v) { be(v, 2); }
    void u32(uint32_t v) { be(v, 4); }
    void u64(uint64_t v) { be(v, 8); }
    void bytes(const void* p, size_t n) {
        if (!m_ok || n > m_out.size() - m_pos) {
            m_ok = false;
            return;
        }
        if (n)
            std::memcpy(m_out.data() + m_pos, p, n);
        m_pos += n;
    }
    void fail() { m_ok = false; }
    bool ok() const { return m_ok; }
    size_t size() const { return m_pos; }
    std::span<const uint8_t> written() const { return m_out.first(m_pos); }

private:
    void be(uint64_t v, size_t n) {
        uint8_t b[8];
        for (size_t i = 0; i < n; ++i)
            b[i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
        bytes(b, n);
    }
    std::span<uint8_t> m_out;
    size_t m_pos = 0;
    bool m_ok = true;
};

class BeReader {
public:
    explicit BeReader(std::span<const uint8_t> in) : m_in(in) {}
    uint8_t u8() { return static_cast<uint8_t>(be(1)); }
    uint16_t u16() { return static_cast<uint16_t>(be(2)); }
    uint32_t u32() { return static_cast<uint32_t>(be(4)); }
    uint64_t u64() { return be(8); }
    // The next n bytes in place; empty (and failed) if fewer are left.
    std::span<const uint8_t> bytes(size_t n) {
        if (!m_ok || n > left()) {
            m_ok = false;
            return {};
        }
        auto s = m_in.subspan(m_pos, n);
        m_pos += n;
        return s;
    }
    void fail() { m_ok = false; }
    size_t left() const { return m_in.size() - m_pos; }
    bool ok() const { return m_ok; }
    bool at_end() const { return m_ok && m_pos == m_in.size(); }

private:
    uint64_t be(size_t n) {
        if (!m_ok || n > left()) {
            m_ok = false;
            return 0;
        }
        uint64_t v = 0;
        for (size_t i = 0; i < n; ++i)
            v = v << 8 | m_in[m_pos + i];
        m_pos += n;
        return v;
    }
    std::span<const uint8_t> m_in;
    size_t m_pos = 0;
    bool m_ok = true;
};

} // namespace ktl

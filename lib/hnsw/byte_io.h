#pragma once
// Little-endian byte writer and bounds-checked reader for snapshots.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <hnsw/crc32.h>

namespace hnsw {

// Writes little-endian values; with no buffer it only counts.
class ByteWriter {
public:
    ByteWriter(uint8_t* out, size_t capacity) : m_out(out), m_capacity(capacity) {}

    void bytes(const void* src, size_t n) {
        if (m_out && m_pos <= m_capacity && n <= m_capacity - m_pos)
            std::memcpy(m_out + m_pos, src, n);
        else if (m_out)
            m_overflow = true;
        m_pos += n;
    }
    void u8(uint8_t v) { bytes(&v, 1); }
    void u16(uint16_t v) { put(v, 2); }
    void u32(uint32_t v) { put(v, 4); }
    void u64(uint64_t v) { put(v, 8); }
    void f32(float v) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        u32(bits);
    }
    // Overwrites a u32/u64 at an earlier position.
    void patch32(size_t at, uint32_t v) { patch(at, v, 4); }
    void patch64(size_t at, uint64_t v) { patch(at, v, 8); }
    uint32_t crc(size_t from) const { return m_out && !m_overflow ? crc32(0, m_out + from, m_pos - from) : 0; }

    size_t pos() const { return m_pos; }
    bool overflow() const { return m_overflow; }

private:
    void put(uint64_t v, int n) {
        uint8_t b[8];
        for (int i = 0; i < n; ++i)
            b[i] = uint8_t(v >> (8 * i));
        bytes(b, n);
    }
    void patch(size_t at, uint64_t v, int n) {
        if (!m_out || at + n > m_capacity)
            return;
        for (int i = 0; i < n; ++i)
            m_out[at + i] = uint8_t(v >> (8 * i));
    }

    uint8_t* m_out;
    size_t m_capacity;
    size_t m_pos = 0;
    bool m_overflow = false;
};

// Bounds-checked little-endian reads; a read past the end sets failed() and yields 0.
class ByteReader {
public:
    ByteReader() = default;
    ByteReader(const uint8_t* data, size_t size) : m_data(data), m_size(size) {}

    bool take(void* dst, size_t n) {
        if (m_failed || n > m_size - m_pos) {
            m_failed = true;
            std::memset(dst, 0, n);
            return false;
        }
        std::memcpy(dst, m_data + m_pos, n);
        m_pos += n;
        return true;
    }
    bool skip(size_t n) {
        if (m_failed || n > m_size - m_pos) {
            m_failed = true;
            return false;
        }
        m_pos += n;
        return true;
    }
    // n little-endian u32 values into dst (zeros after a failed read, like u32()).
    bool u32s(uint32_t* dst, size_t n) {
        if constexpr (std::endian::native == std::endian::little)
            return take(dst, 4 * n); // the format's bytes are the values
        for (size_t i = 0; i < n; ++i)
            dst[i] = u32();
        return !m_failed;
    }
    uint8_t u8() {
        uint8_t v;
        take(&v, 1);
        return v;
    }
    uint16_t u16() { return uint16_t(get(2)); }
    uint32_t u32() { return uint32_t(get(4)); }
    uint64_t u64() { return get(8); }
    float f32() {
        uint32_t bits = u32();
        float v;
        std::memcpy(&v, &bits, 4);
        return v;
    }
    size_t pos() const { return m_pos; }
    size_t remaining() const { return m_size - m_pos; }
    bool failed() const { return m_failed; }
    const uint8_t* here() const { return m_data + m_pos; }

private:
    uint64_t get(int n) {
        uint8_t b[8];
        take(b, n);
        uint64_t v = 0;
        for (int i = 0; i < n; ++i)
            v |= uint64_t(b[i]) << (8 * i);
        return v;
    }

    const uint8_t* m_data = nullptr;
    size_t m_size = 0;
    size_t m_pos = 0;
    bool m_failed = false;
};

} // namespace hnsw

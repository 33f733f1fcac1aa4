#pragma once
// A reflected 32-bit CRC over any polynomial, eight bytes a step (slicing-by-8). The snapshot's
// CRC-32 (hnsw) and the log's and checkpoints' CRC-32C (storage) both cover every byte they
// save and load, so both take this loop; only the polynomial differs.
#include <cstddef>
#include <cstdint>

namespace ktl {

template <uint32_t Poly>
struct CrcSlice8 {
    uint32_t t[8][256];

    constexpr CrcSlice8() : t() {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? (c >> 1) ^ Poly : c >> 1;
            t[0][i] = c;
        }
        for (int k = 1; k < 8; ++k)
            for (uint32_t i = 0; i < 256; ++i)
                t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
    }

    // Continues `crc` (0 to start) over data[0..len).
    uint32_t update(uint32_t crc, const uint8_t* data, size_t len) const {
        crc = ~crc;
        for (; len >= 8; data += 8, len -= 8) {
            const uint32_t lo = crc ^ le32(data), hi = le32(data + 4);
            crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
                  t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
        }
        for (; len > 0; ++data, --len)
            crc = t[0][(crc ^ *data) & 0xff] ^ (crc >> 8);
        return ~crc;
    }

private:
    static uint32_t le32(const uint8_t* p) {
        return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    }
};

} // namespace ktl

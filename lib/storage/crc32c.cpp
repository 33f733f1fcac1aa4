#include "crc32c.h"

namespace storage {
namespace {

// Eight tables, so that the loop takes eight bytes a step (slicing-by-8): every log record and
// every byte of a checkpoint is checked with it.
struct Tables {
    uint32_t v[8][256];
    constexpr Tables() : v() {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            v[0][i] = c;
        }
        for (int k = 1; k < 8; ++k)
            for (uint32_t i = 0; i < 256; ++i)
                v[k][i] = (v[k - 1][i] >> 8) ^ v[0][v[k - 1][i] & 0xff];
    }
};
constexpr Tables kTables;

inline uint32_t le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

} // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    const auto& t = kTables.v;
    crc = ~crc;
    for (; len >= 8; p += 8, len -= 8) {
        const uint32_t lo = crc ^ le32(p), hi = le32(p + 4);
        crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
              t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    }
    for (; len > 0; ++p, --len)
        crc = t[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
    return ~crc;
}

} // namespace storage

#pragma once
// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as used by zlib and PNG.
#include <cstddef>
#include <cstdint>

namespace hnsw {

// Continue a CRC: crc32(crc32(0, a), b) == crc32(0, a ++ b).
uint32_t crc32(uint32_t crc, const uint8_t* data, size_t len);

} // namespace hnsw

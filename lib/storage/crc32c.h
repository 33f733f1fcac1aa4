#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of the storage log's
// records (iSCSI, ext4 and btrfs use it for the same job: it catches the burst errors a torn or
// rotted sector produces). crc32c("123456789") == 0xE3069283.
#include <cstddef>
#include <cstdint>

namespace storage {

// Continues a CRC: pass 0 to start.
uint32_t crc32c(uint32_t crc, const void* data, size_t len);

} // namespace storage

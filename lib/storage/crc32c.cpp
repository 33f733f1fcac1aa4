#include "crc32c.h"

#include <ktl/crc_slice8.h>

namespace storage {
namespace {

constexpr ktl::CrcSlice8<0x82F63B78u> kCrc32c;

} // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t len) {
    return kCrc32c.update(crc, static_cast<const uint8_t*>(data), len);
}

} // namespace storage

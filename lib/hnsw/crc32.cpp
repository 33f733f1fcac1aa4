#include <hnsw/crc32.h>

#include <ktl/crc_slice8.h>

namespace hnsw {
namespace {

constexpr ktl::CrcSlice8<0xedb88320u> kCrc32;
static_assert(kCrc32.t[0][1] == 0x77073096u);

} // namespace

uint32_t crc32(uint32_t crc, const uint8_t* data, size_t len) { return kCrc32.update(crc, data, len); }

} // namespace hnsw

#pragma once
// A block device as the storage layer sees it: fixed-size sectors, read and written whole, and a
// flush that returns once everything written before it is durable. virtio-blk implements it in
// the kernel (later, the Pi's SD card too); the host tests implement it with a simulated disk that
// loses power between, or in the middle of, sector writes.
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>

namespace storage {

class BlockDevice {
public:
    virtual uint32_t sector_size() const = 0; // bytes, a power of two, at least 512
    virtual uint64_t sectors() const = 0;
    // Whole sectors: out.size() a multiple of sector_size(), within the device.
    virtual ktl::Result<void> read(uint64_t lba, std::span<std::byte> out) = 0;
    virtual ktl::Result<void> write(uint64_t lba, std::span<const std::byte> data) = 0;
    // Everything written before is durable when it returns. Unsupported: the device cannot say
    // (no FLUSH): writes may still be in a volatile cache, and the caller must report that.
    virtual ktl::Result<void> flush() = 0;

protected:
    ~BlockDevice() = default;
};

} // namespace storage

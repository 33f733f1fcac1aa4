#pragma once
// virtio entropy device (VIRTIO 1.1, 5.4) over the MMIO transport: one request queue; the driver
// offers a device-writable buffer and the device fills it with random bytes from the host
// (QEMU: `-device virtio-rng-device`, backed by the host's /dev/urandom). Polled: the kernel asks
// for a few dozen bytes at boot and at each reseed, so there is no interrupt to route.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "virtio_mmio.h"
#include "virtqueue.h"

namespace virtio {

class VirtioRng {
public:
    static constexpr size_t kMaxRequest = 64;

    static ktl::Result<VirtioRng*> create(const VirtioMmio& transport, DmaAllocator dma);

    // Up to min(len, kMaxRequest) bytes from the device into out; returns how many it gave (0: none
    // within the poll bound, or the queue is broken). Not for interrupt context.
    size_t read(uint8_t* out, size_t len);
    uintptr_t base() const { return m_dev.base(); }
    bool legacy() const { return m_dev.legacy(); }

private:
    VirtioRng() = default;
    VirtioMmio m_dev;
    Virtqueue m_queue;
    uintptr_t m_buffer = 0;
};

} // namespace virtio

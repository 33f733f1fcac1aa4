#pragma once
// virtio over MMIO (Virtual I/O Device (VIRTIO) Version 1.1, 4.2): the register window of one
// device slot, legacy (version 1, 4.2.4) and modern (version 2, 4.2.2) alike. Every access to
// the window goes through this class; what the device reports is checked before it is used.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

namespace virtio {

class Virtqueue;

// 5: device types this kernel knows.
enum class DeviceType : uint32_t { None = 0, Net = 1, Block = 2, Console = 3, Entropy = 4 };

// 2.1: device status bits.
namespace status {
constexpr uint32_t kAcknowledge = 1;
constexpr uint32_t kDriver = 2;
constexpr uint32_t kDriverOk = 4;
constexpr uint32_t kFeaturesOk = 8;
constexpr uint32_t kFailed = 128;
} // namespace status

// 6: reserved feature bits shared by every device type.
namespace feature {
constexpr uint64_t kAnyLayout = 1ull << 27;
constexpr uint64_t kVersion1 = 1ull << 32;
} // namespace feature

// Identity-mapped, zeroed, page-aligned RAM that the device may read and write.
using DmaAllocator = ktl::Result<uintptr_t> (*)(size_t bytes);

// Where a queue's three parts live (physical addresses; the kernel maps RAM 1:1).
struct QueueLayout {
    uint16_t size;
    uint64_t desc;
    uint64_t avail;
    uint64_t used;
};

class VirtioMmio {
public:
    static constexpr uint32_t kMagic = 0x74726976; // "virt"
    static constexpr uint32_t kLegacyPageSize = 4096;

    // Reads the identification registers; NotFound for an empty slot (device ID 0),
    // Unsupported for a bad magic or an unknown version.
    static ktl::Result<VirtioMmio> probe(uintptr_t base, size_t window);
    VirtioMmio() = default;

    bool legacy() const { return m_version == 1; }
    uint32_t version() const { return m_version; }
    DeviceType device_type() const { return static_cast<DeviceType>(m_device_id); }
    uintptr_t base() const { return m_base; }

    // 3.1.1 steps 1-6: reset, ACKNOWLEDGE | DRIVER, offer `wanted` & device features, and on a
    // modern device FEATURES_OK confirmed by the device. `required` bits must be offered.
    // Returns the negotiated set.
    ktl::Result<uint64_t> negotiate(uint64_t wanted, uint64_t required);
    // Largest queue the device allows for `index` (0 = no such queue).
    uint16_t queue_max(uint16_t index);
    // Hands the rings of queue `index` to the device. Legacy devices need the contiguous layout
    // of 2.6.2 (used ring at a kLegacyPageSize boundary), passed as one page frame number.
    ktl::Result<void> queue_attach(uint16_t index, const QueueLayout& layout);
    // The common case of both: queue `index` sized to the largest power of two the device allows
    // and `wanted` does not exceed, its rings from `dma`, handed to the device.
    ktl::Result<void> queue_setup(Virtqueue& q, uint16_t index, uint16_t wanted, DmaAllocator dma);
    void driver_ok();
    void fail();
    void reset();

    void notify(uint16_t queue);
    // Reads and acknowledges the interrupt status (bit 0 used buffer, bit 1 configuration).
    uint32_t take_interrupt();

    // Device-specific configuration space (byte reads; 4.2.2: read until the generation is stable).
    ktl::Result<void> read_config(size_t offset, uint8_t* out, size_t len);

private:
    uint32_t read(uint32_t reg) const;
    void write(uint32_t reg, uint32_t value);

    uintptr_t m_base = 0;
    size_t m_window = 0;
    uint32_t m_version = 0;
    uint32_t m_device_id = 0;
};

} // namespace virtio

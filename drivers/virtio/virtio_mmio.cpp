#include "virtio_mmio.h"

#include "../mmio.h"
#include "virtqueue.h"

namespace virtio {
namespace {

// 4.2.2 (modern) and 4.2.4 (legacy) register offsets.
enum Reg : uint32_t {
    MagicValue = 0x000,
    Version = 0x004,
    DeviceId = 0x008,
    DeviceFeatures = 0x010,
    DeviceFeaturesSel = 0x014,
    DriverFeatures = 0x020,
    DriverFeaturesSel = 0x024,
    GuestPageSize = 0x028, // legacy
    QueueSel = 0x030,
    QueueNumMax = 0x034,
    QueueNum = 0x038,
    QueueAlign = 0x03c, // legacy
    QueuePfn = 0x040,   // legacy
    QueueReady = 0x044, // modern
    QueueNotify = 0x050,
    InterruptStatus = 0x060,
    InterruptAck = 0x064,
    Status = 0x070,
    QueueDescLow = 0x080,
    QueueDescHigh = 0x084,
    QueueDriverLow = 0x090,
    QueueDriverHigh = 0x094,
    QueueDeviceLow = 0x0a0,
    QueueDeviceHigh = 0x0a4,
    ConfigGeneration = 0x0fc, // modern
    Config = 0x100,
};

constexpr size_t kMinWindow = 0x100;
constexpr uint32_t kMaxConfigRetries = 8;

} // namespace

ktl::Result<VirtioMmio> VirtioMmio::probe(uintptr_t base, size_t window) {
    if (base == 0 || window < kMinWindow)
        return ktl::Error::InvalidArgs;
    VirtioMmio dev;
    dev.m_base = base;
    dev.m_window = window;
    if (dev.read(MagicValue) != kMagic)
        return ktl::Error::Unsupported;
    dev.m_version = dev.read(Version);
    if (dev.m_version != 1 && dev.m_version != 2)
        return ktl::Error::Unsupported;
    dev.m_device_id = dev.read(DeviceId);
    if (dev.m_device_id == 0)
        return ktl::Error::NotFound;
    return dev;
}

uint32_t VirtioMmio::read(uint32_t reg) const { return mmio::read32(m_base + reg); }
void VirtioMmio::write(uint32_t reg, uint32_t value) { mmio::write32(m_base + reg, value); }

void VirtioMmio::reset() {
    write(Status, 0);
    // 4.2.3.1: the driver waits for Status to read back 0 (bounded: a stuck device fails later).
    for (int i = 0; i < 1000 && read(Status) != 0; ++i) {}
}

void VirtioMmio::fail() { write(Status, read(Status) | status::kFailed); }
void VirtioMmio::driver_ok() { write(Status, read(Status) | status::kDriverOk); }

ktl::Result<uint64_t> VirtioMmio::negotiate(uint64_t wanted, uint64_t required) {
    reset();
    write(Status, status::kAcknowledge);
    write(Status, status::kAcknowledge | status::kDriver);
    uint64_t offered = 0;
    // Legacy devices expose 32 feature bits only (HostFeaturesSel 0).
    uint32_t words = legacy() ? 1 : 2;
    for (uint32_t sel = 0; sel < words; ++sel) {
        write(DeviceFeaturesSel, sel);
        offered |= static_cast<uint64_t>(read(DeviceFeatures)) << (32 * sel);
    }
    if ((offered & required) != required) {
        fail();
        return ktl::Error::Unsupported;
    }
    uint64_t accepted = offered & (wanted | required);
    for (uint32_t sel = 0; sel < words; ++sel) {
        write(DriverFeaturesSel, sel);
        write(DriverFeatures, static_cast<uint32_t>(accepted >> (32 * sel)));
    }
    if (legacy()) {
        // 4.2.4: no FEATURES_OK; the page size sets the unit of QueuePFN.
        write(GuestPageSize, kLegacyPageSize);
        return accepted;
    }
    write(Status, status::kAcknowledge | status::kDriver | status::kFeaturesOk);
    if ((read(Status) & status::kFeaturesOk) == 0) { // 3.1.1 step 6: the device refused the subset
        fail();
        return ktl::Error::Unsupported;
    }
    return accepted;
}

uint16_t VirtioMmio::queue_max(uint16_t index) {
    write(QueueSel, index);
    uint32_t max = read(QueueNumMax);
    // Already live (modern) or assigned (legacy): not ours to take.
    if ((legacy() ? read(QueuePfn) : read(QueueReady)) != 0)
        return 0;
    return max > 0x8000 ? 0x8000 : static_cast<uint16_t>(max);
}

ktl::Result<void> VirtioMmio::queue_setup(Virtqueue& q, uint16_t index, uint16_t wanted, DmaAllocator dma) {
    uint16_t max = queue_max(index);
    if (max == 0)
        return ktl::Error::NotFound;
    uint16_t size = 1;
    while (size * 2u <= max && size * 2u <= wanted && size * 2u <= Virtqueue::kMaxSize)
        size = static_cast<uint16_t>(size * 2);
    uintptr_t ring = TRY(dma(Virtqueue::ring_bytes(size)));
    TRY_VOID(q.init(size, ring));
    return queue_attach(index, q.layout());
}

ktl::Result<void> VirtioMmio::queue_attach(uint16_t index, const QueueLayout& q) {
    if (q.size == 0 || (q.size & (q.size - 1)) != 0 || q.size > queue_max(index))
        return ktl::Error::InvalidArgs;
    write(QueueSel, index);
    write(QueueNum, q.size);
    if (legacy()) {
        if (q.desc % kLegacyPageSize != 0 || q.desc / kLegacyPageSize > 0xffffffffull)
            return ktl::Error::InvalidArgs;
        write(QueueAlign, kLegacyPageSize);
        write(QueuePfn, static_cast<uint32_t>(q.desc / kLegacyPageSize));
        return {};
    }
    write(QueueDescLow, static_cast<uint32_t>(q.desc));
    write(QueueDescHigh, static_cast<uint32_t>(q.desc >> 32));
    write(QueueDriverLow, static_cast<uint32_t>(q.avail));
    write(QueueDriverHigh, static_cast<uint32_t>(q.avail >> 32));
    write(QueueDeviceLow, static_cast<uint32_t>(q.used));
    write(QueueDeviceHigh, static_cast<uint32_t>(q.used >> 32));
    write(QueueReady, 1);
    return {};
}

void VirtioMmio::notify(uint16_t queue) {
    // The ring writes must be visible to the device before it hears about them.
    asm volatile("dsb sy" ::: "memory");
    write(QueueNotify, queue);
}

uint32_t VirtioMmio::take_interrupt() {
    uint32_t bits = read(InterruptStatus) & 3;
    if (bits)
        write(InterruptAck, bits);
    return bits;
}

ktl::Result<void> VirtioMmio::read_config(size_t offset, uint8_t* out, size_t len) {
    if (offset > m_window - Config || len > m_window - Config - offset)
        return ktl::Error::OutOfRange;
    for (uint32_t attempt = 0; attempt < kMaxConfigRetries; ++attempt) {
        uint32_t before = legacy() ? 0 : read(ConfigGeneration);
        for (size_t i = 0; i < len; ++i)
            out[i] = mmio::read8(m_base + Config + offset + i);
        if (legacy() || read(ConfigGeneration) == before)
            return {};
    }
    return ktl::Error::WouldBlock;
}

} // namespace virtio

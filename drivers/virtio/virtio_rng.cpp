#include "virtio_rng.h"

#include <new>

namespace virtio {
namespace {

constexpr uint16_t kRequestQueue = 0;
constexpr uint32_t kPollBound = 1'000'000; // QEMU completes the request during the notify itself

alignas(VirtioRng) uint8_t g_storage[sizeof(VirtioRng)];
bool g_used = false;

} // namespace

ktl::Result<VirtioRng*> VirtioRng::create(const VirtioMmio& transport, DmaAllocator dma) {
    if (transport.device_type() != DeviceType::Entropy || !dma)
        return ktl::Error::InvalidArgs;
    if (g_used)
        return ktl::Error::Full;
    auto* rng = new (g_storage) VirtioRng();
    rng->m_dev = transport;
    VirtioMmio& dev = rng->m_dev;
    auto features = dev.negotiate(0, dev.legacy() ? 0 : feature::kVersion1);
    if (!features)
        return features.error();
    if (auto r = dev.queue_setup(rng->m_queue, kRequestQueue, 1, dma); !r) {
        dev.fail();
        return r.error();
    }
    auto buffer = dma(4096);
    if (!buffer) {
        dev.fail();
        return buffer.error();
    }
    rng->m_buffer = *buffer;
    rng->m_queue.suppress_interrupts();
    dev.driver_ok();
    g_used = true;
    return rng;
}

size_t VirtioRng::read(uint8_t* out, size_t len) {
    if (len > kMaxRequest)
        len = kMaxRequest;
    if (len == 0 || m_queue.broken() || m_queue.held_by_device(0))
        return 0;
    if (!m_queue.post(0, m_buffer, static_cast<uint32_t>(len), true))
        return 0;
    m_queue.publish();
    m_dev.notify(kRequestQueue);
    Virtqueue::Completion c {};
    bool done = false;
    for (uint32_t i = 0; i < kPollBound && !(done = m_queue.pop(c)); ++i) {}
    if (!done)
        return 0; // the buffer stays with the device: no further requests (held_by_device)
    // 5.4.6: the device may return fewer bytes than asked; the length is clamped to the buffer.
    size_t got = c.len < len ? c.len : len;
    const auto* src = reinterpret_cast<const volatile uint8_t*>(m_buffer);
    for (size_t i = 0; i < got; ++i)
        out[i] = src[i];
    return got;
}

} // namespace virtio

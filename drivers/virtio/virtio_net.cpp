#include "virtio_net.h"

#include <cstring>
#include <new>

namespace virtio {
namespace {

constexpr uint64_t kNetFMac = 1ull << 5; // 5.1.3
constexpr size_t kLegacyHeader = 10;     // 5.1.6: struct virtio_net_hdr without num_buffers
constexpr size_t kModernHeader = 12;     // ... with num_buffers (always present with VERSION_1)
// When the device has no MAC of its own: locally administered, unicast.
constexpr uint8_t kFallbackMac[6] = { 0x02, 0xba, 0x5a, 0x17, 0x00, 0x01 };

// One slot per device the kernel drives (a swarm node has two: the fabric and QEMU's user network).
alignas(VirtioNet) uint8_t g_storage[VirtioNet::kMaxDevices][sizeof(VirtioNet)];
size_t g_used = 0;

size_t page_round(size_t bytes) { return (bytes + 4095) & ~size_t(4095); }

} // namespace

ktl::Result<VirtioNet*> VirtioNet::create(const VirtioMmio& transport, DmaAllocator dma) {
    if (transport.device_type() != DeviceType::Net || !dma)
        return ktl::Error::InvalidArgs;
    if (g_used == kMaxDevices)
        return ktl::Error::Full;
    auto* net = new (g_storage[g_used]) VirtioNet();
    net->m_dev = transport;
    VirtioMmio& dev = net->m_dev;

    uint64_t required = dev.legacy() ? 0 : feature::kVersion1;
    uint64_t wanted = kNetFMac | (dev.legacy() ? feature::kAnyLayout : 0);
    auto features = dev.negotiate(wanted, required);
    if (!features)
        return features.error();
    net->m_features = *features;
    net->m_header = (*features & feature::kVersion1) ? kModernHeader : kLegacyHeader;

    if (*features & kNetFMac) {
        if (auto r = dev.read_config(0, net->m_mac, sizeof net->m_mac); !r) {
            dev.fail();
            return r.error();
        }
    }
    // No address, or one a station cannot use as its own (all zero, multicast): ours instead.
    static constexpr uint8_t kZero[6] = {};
    if (!(*features & kNetFMac) || (net->m_mac[0] & 1) || memcmp(net->m_mac, kZero, sizeof kZero) == 0)
        memcpy(net->m_mac, kFallbackMac, sizeof net->m_mac);

    if (auto r = net->setup_queue(net->m_rx, kRxQueue, kRxBuffers, net->m_rx_buffers, dma); !r) {
        dev.fail();
        return r.error();
    }
    if (auto r = net->setup_queue(net->m_tx, kTxQueue, kTxBuffers, net->m_tx_buffers, dma); !r) {
        dev.fail();
        return r.error();
    }
    // Sent frames' buffers are taken back when the next frame is sent (tx_acquire): a completion
    // interrupt would only wake the net task for nothing, once per frame.
    net->m_tx.suppress_interrupts();
    // 5.1.6.3: fill the receive queue before the device may use it.
    for (uint16_t id = 0; id < net->m_rx.size(); ++id)
        (void)net->m_rx.post(id, net->m_rx_buffers + id * kBufferBytes, kBufferBytes, true);
    net->m_rx.publish();
    dev.driver_ok();
    dev.notify(kRxQueue);
    ++g_used;
    return net;
}

ktl::Result<void> VirtioNet::setup_queue(Virtqueue& q, uint16_t index, uint16_t wanted, uintptr_t& buffers,
                                         DmaAllocator dma) {
    TRY_VOID(m_dev.queue_setup(q, index, wanted, dma));
    buffers = TRY(dma(page_round(size_t(q.size()) * kBufferBytes)));
    return {};
}

size_t VirtioNet::receive(RxFn fn, void* ctx, size_t budget) {
    size_t taken = 0;
    Virtqueue::Completion c;
    while (taken < budget && m_rx.pop(c)) {
        ++taken;
        const uint8_t* buf = reinterpret_cast<const uint8_t*>(m_rx_buffers + c.id * kBufferBytes);
        if (c.len <= m_header || c.len - m_header > kMaxFrame) {
            ++m_rx_dropped;
        } else {
            ++m_rx_frames;
            fn(ctx, buf + m_header, c.len - m_header);
        }
        (void)m_rx.post(c.id, m_rx_buffers + c.id * kBufferBytes, kBufferBytes, true);
    }
    if (taken) {
        m_rx.publish();
        if (m_rx.wants_notification())
            m_dev.notify(kRxQueue);
    }
    return taken;
}

size_t VirtioNet::reclaim_tx() {
    size_t n = 0;
    Virtqueue::Completion c;
    while (n < m_tx.size() && m_tx.pop(c))
        ++n;
    return n;
}

uint8_t* VirtioNet::tx_acquire(size_t& capacity) {
    if (m_tx_open >= 0)
        return nullptr;
    reclaim_tx();
    for (uint16_t id = 0; id < m_tx.size(); ++id) {
        if (m_tx.held_by_device(id))
            continue;
        m_tx_open = id;
        auto* buf = reinterpret_cast<uint8_t*>(m_tx_buffers + id * kBufferBytes);
        memset(buf, 0, m_header); // no checksum offload, no segmentation
        capacity = kMaxFrame;
        return buf + m_header;
    }
    ++m_tx_busy;
    return nullptr;
}

void VirtioNet::tx_submit(size_t len) {
    if (m_tx_open < 0)
        return;
    auto id = static_cast<uint16_t>(m_tx_open);
    m_tx_open = -1;
    if (len == 0 || len > kMaxFrame)
        return;
    uintptr_t buf = m_tx_buffers + id * kBufferBytes;
    if (!m_tx.post(id, buf, static_cast<uint32_t>(m_header + len), false))
        return;
    m_tx.publish();
    if (m_tx.wants_notification())
        m_dev.notify(kTxQueue);
    ++m_tx_frames;
}

void VirtioNet::handle_irq() {
    m_dev.take_interrupt();
    m_irqs = m_irqs + 1;
    notify();
}

VirtioNet::Stats VirtioNet::stats() const {
    return { m_irqs,
             m_rx_frames,
             m_rx_dropped,
             m_tx_frames,
             m_tx_busy,
             m_rx.rejected() + m_tx.rejected(),
             m_rx.broken() || m_tx.broken() };
}

} // namespace virtio

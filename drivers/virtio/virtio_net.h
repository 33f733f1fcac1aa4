#pragma once
// virtio network device (VIRTIO 1.1, 5.1) over the MMIO transport: receive queue 0 pre-filled
// with fixed buffers, transmit queue 1, MAC from the configuration space. The interrupt handler
// only acknowledges the device and wakes the owner; the owner (the kernel's net task) moves the
// frames, so the rings have a single user and need no lock.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "../nic.h"
#include "virtio_mmio.h"
#include "virtqueue.h"

namespace virtio {

class VirtioNet final : public Nic {
public:
    static constexpr uint16_t kRxQueue = 0;
    static constexpr uint16_t kTxQueue = 1;
    static constexpr uint16_t kRxBuffers = 64;
    static constexpr uint16_t kTxBuffers = 128;
    static constexpr size_t kBufferBytes = 2048;
    static constexpr size_t kMaxFrame = 1514; // Ethernet header + 1500 bytes MTU, no FCS
    static constexpr size_t kMaxDevices = 2;  // instances create() can make (static storage)

    static ktl::Result<VirtioNet*> create(const VirtioMmio& transport, DmaAllocator dma);

    const uint8_t* mac() const override { return m_mac; }
    uint32_t transport_version() const { return m_dev.version(); }
    uintptr_t base() const { return m_dev.base(); }
    uint64_t features() const { return m_features; }

    // Hands each received frame (without the virtio header) to fn, then gives its buffer back
    // to the device. Takes at most `budget` completions, malformed ones (dropped) included, so
    // a device flooding the ring cannot keep the caller here; returns how many it took.
    size_t receive(RxFn fn, void* ctx, size_t budget) override;

    // A transmit buffer for one frame of up to `capacity` bytes, or nullptr when all are with the
    // device. tx_submit() sends what was written; nothing else may be acquired in between.
    uint8_t* tx_acquire(size_t& capacity) override;
    void tx_submit(size_t len) override;
    size_t reclaim_tx() override;

    // Interrupt path: acknowledge, count, wake the owner.
    static void irq_entry(void* self) { static_cast<VirtioNet*>(self)->handle_irq(); }

    struct Stats {
        uint64_t irqs, rx_frames, rx_dropped, tx_frames, tx_busy, rejected;
        bool broken;
    };
    Stats stats() const;
    Counters counters() const override {
        Stats s = stats();
        return { s.irqs, s.rx_frames, s.rx_dropped, s.tx_frames };
    }

private:
    VirtioNet() = default;
    ktl::Result<void> setup_queue(Virtqueue& q, uint16_t index, uint16_t wanted, uintptr_t& buffers, DmaAllocator dma);
    void handle_irq();

    VirtioMmio m_dev;
    uint64_t m_features = 0;
    size_t m_header = 0; // 5.1.6: 10 bytes legacy, 12 with VIRTIO_F_VERSION_1
    uint8_t m_mac[6] = {};
    Virtqueue m_rx;
    Virtqueue m_tx;
    uintptr_t m_rx_buffers = 0;
    uintptr_t m_tx_buffers = 0;
    int32_t m_tx_open = -1; // acquired, not yet submitted
    volatile uint64_t m_irqs = 0;
    uint64_t m_rx_frames = 0;
    uint64_t m_rx_dropped = 0;
    uint64_t m_tx_frames = 0;
    uint64_t m_tx_busy = 0;
};

} // namespace virtio

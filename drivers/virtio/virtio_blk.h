#pragma once
// virtio block device (VIRTIO 1.1, 5.2) over the MMIO transport, legacy and modern. One request
// queue; each request is a chain of three descriptors (header, data, status byte) in a fixed slot
// with its own bounce buffer, so several requests are in flight at once and a request whose
// waiter gave up can finish into memory the driver still owns. The interrupt handler reaps
// completions and reports each one through a callback; it never trusts the device: a used id must
// name a slot the device holds, the status byte must be exactly OK, and a read must report the
// whole transfer written.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "virtio_mmio.h"
#include "virtqueue.h"

namespace virtio {

class VirtioBlk {
public:
    static constexpr uint16_t kSlots = 16;              // requests in flight at once
    static constexpr uint32_t kMaxTransfer = 64 * 1024; // bytes per request (the bounce buffer)
    static constexpr uint32_t kSectorUnit = 512;        // 5.2.6: the header's sector is always 512 bytes
    static constexpr uint64_t kMaxSectors = 1ull << 40; // capacities beyond 512 TiB are refused as nonsense

    enum class Op : uint32_t { Read = 0, Write = 1, Flush = 4 };

    // Called from the interrupt for each finished request: the slot, and None, IoError (the device
    // said so) or Corrupt (the device's answer made no sense). For a read the data is in
    // buffer(slot) until the slot is submitted again.
    using Completion = void (*)(void* ctx, uint16_t slot, ktl::Error status);

    static ktl::Result<VirtioBlk*> create(const VirtioMmio& transport, DmaAllocator dma);

    uint64_t capacity_bytes() const { return m_sectors * kSectorUnit; }
    uint32_t block_size() const { return m_block_size; } // the device's preferred unit (>= 512)
    bool can_flush() const { return m_flush; }
    bool read_only() const { return m_read_only; }
    uintptr_t base() const { return m_dev.base(); }
    bool legacy() const { return m_dev.legacy(); }

    void set_completion(Completion fn, void* ctx) {
        m_done = fn;
        m_done_ctx = ctx;
    }
    // A free slot (reserved until submit), or -1 when all are in flight.
    int32_t acquire();
    void release(uint16_t slot); // an acquired slot given back unused
    // The slot's bounce buffer (kMaxTransfer bytes): a write's data goes here before submit.
    uint8_t* buffer(uint16_t slot) const;
    // Starts the request in an acquired slot: `sector` in 512-byte units, `len` a multiple of 512
    // (0 for Flush), within the device. Unsupported: Flush on a device without it, Write on a
    // read-only one.
    ktl::Result<void> submit(uint16_t slot, Op op, uint64_t sector, uint32_t len);

    static void irq_entry(void* self) { static_cast<VirtioBlk*>(self)->handle_irq(); }

    struct Stats {
        uint64_t irqs, reads, writes, flushes, errors, rejected;
        uint64_t bytes_read, bytes_written;
        uint32_t in_flight;
        bool broken;
    };
    Stats stats() const;

private:
    VirtioBlk() = default;
    void handle_irq();

    struct Header { // 5.2.6
        uint32_t type;
        uint32_t reserved;
        uint64_t sector;
    };
    static_assert(sizeof(Header) == 16, "5.2.6: 16-byte request header");

    enum class SlotState : uint8_t { Free, Acquired, InFlight };

    VirtioMmio m_dev;
    Virtqueue m_queue;
    uint64_t m_sectors = 0;
    uint32_t m_block_size = kSectorUnit;
    bool m_flush = false;
    bool m_read_only = false;
    uintptr_t m_headers = 0; // kSlots headers, then kSlots status bytes (one DMA page)
    uintptr_t m_buffers = 0; // kSlots * kMaxTransfer
    SlotState m_state[kSlots] = {};
    Op m_op[kSlots] = {};
    uint32_t m_len[kSlots] = {};
    Completion m_done = nullptr;
    void* m_done_ctx = nullptr;
    volatile uint64_t m_irqs = 0;
    uint64_t m_reads = 0, m_writes = 0, m_flushes = 0, m_errors = 0;
    uint64_t m_bytes_read = 0, m_bytes_written = 0;
};

} // namespace virtio

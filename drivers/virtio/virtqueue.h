#pragma once
// A split virtqueue (VIRTIO 1.1, 2.6) with one descriptor per buffer: descriptor i always
// carries the driver's buffer i, so a completion names its buffer directly. The rings sit in
// one zeroed block in the legacy layout (2.6.2: used ring on the next page boundary), which a
// modern device accepts too. Nothing the device writes is trusted: used-ring ids must name a
// buffer the device currently holds, lengths are clamped to the buffer, and a used index that
// runs ahead by more than the ring size marks the queue broken.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "virtio_mmio.h"

namespace virtio {

class Virtqueue {
public:
    static constexpr uint16_t kMaxSize = 256;

    // Bytes of ring memory a queue of `size` needs (page-aligned block).
    static size_t ring_bytes(uint16_t size);

    // ring: zeroed, kLegacyPageSize-aligned, ring_bytes(size) long, identity-mapped RAM.
    ktl::Result<void> init(uint16_t size, uintptr_t ring);
    QueueLayout layout() const;
    uint16_t size() const { return m_size; }

    // Gives buffer `id` (phys addr, len) to the device; visible after publish().
    ktl::Result<void> post(uint16_t id, uint64_t addr, uint32_t len, bool device_writes);
    // A chain of `count` buffers in descriptors head .. head + count - 1 (the caller keeps those
    // for this one chain: e.g. request slot s uses 3s .. 3s + 2); the device reports `head`, and the
    // completion's length is clamped to the device-writable part.
    struct Segment {
        uint64_t addr;
        uint32_t len;
        bool device_writes;
    };
    ktl::Result<void> post_chain(uint16_t head, const Segment* segments, uint16_t count);
    void publish();
    bool held_by_device(uint16_t id) const { return id < m_size && m_in_flight[id]; }

    struct Completion {
        uint16_t id;
        uint32_t len;
    };
    // Next completed buffer, validated; false when none (or the queue is broken).
    bool pop(Completion& out);
    // Whether the device has published completions not yet popped (they may still be rejected).
    bool has_completions() const { return !m_broken && m_used_hdr[1] != m_last_used; }
    // 2.6.7: asks the device not to interrupt when it uses this queue's buffers (the driver
    // reclaims them when it next needs one).
    void suppress_interrupts() { m_avail[0] = 1; }
    // 2.7.7.2 (no VIRTIO_F_EVENT_IDX): after publish(), whether the device asked to be told. It
    // sets the used ring's NO_NOTIFY flag while it will read the available ring on its own (QEMU:
    // while a transmit is under way, while its receive queue still has buffers); a notification
    // then costs an exit to the device for nothing.
    bool wants_notification() const;
    bool broken() const { return m_broken; }
    uint64_t rejected() const { return m_rejected; }

private:
    struct Desc {
        uint64_t addr;
        uint32_t len;
        uint16_t flags;
        uint16_t next;
    };
    static_assert(sizeof(Desc) == 16, "2.6.5: 16-byte descriptors");
    struct UsedElem {
        uint32_t id;
        uint32_t len;
    };
    static_assert(sizeof(UsedElem) == 8, "2.6.8: 8-byte used elements");

    volatile Desc* m_desc = nullptr;
    volatile uint16_t* m_avail = nullptr;    // flags, idx, ring[size], used_event
    volatile uint16_t* m_used_hdr = nullptr; // flags, idx
    volatile UsedElem* m_used_ring = nullptr;
    uintptr_t m_ring = 0;
    uint16_t m_size = 0;
    uint16_t m_avail_idx = 0;
    uint16_t m_last_used = 0;
    bool m_broken = false;
    uint64_t m_rejected = 0;
    bool m_in_flight[kMaxSize] = {};
    uint32_t m_len[kMaxSize] = {};
};

} // namespace virtio

#include "virtqueue.h"

namespace virtio {
namespace {

constexpr uint16_t kDescNext = 1;  // 2.6.5: the chain continues in `next`
constexpr uint16_t kDescWrite = 2; // 2.6.5: the device writes this buffer

constexpr size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }
constexpr size_t desc_bytes(uint16_t size) { return 16u * size; }
constexpr size_t avail_bytes(uint16_t size) { return 6u + 2u * size; }
constexpr size_t used_offset(uint16_t size) {
    return align_up(desc_bytes(size) + avail_bytes(size), VirtioMmio::kLegacyPageSize);
}
constexpr size_t used_bytes(uint16_t size) { return 6u + 8u * size; }

// Orders ring accesses against the device's (full system barrier: the device is another
// observer outside the inner-shareable domain). Host builds (the unit tests) use a fence.
inline void barrier() {
#if defined(__aarch64__)
    asm volatile("dmb sy" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

} // namespace

size_t Virtqueue::ring_bytes(uint16_t size) {
    return align_up(used_offset(size) + used_bytes(size), VirtioMmio::kLegacyPageSize);
}

ktl::Result<void> Virtqueue::init(uint16_t size, uintptr_t ring) {
    if (size == 0 || size > kMaxSize || (size & (size - 1)) != 0 || ring % VirtioMmio::kLegacyPageSize != 0)
        return ktl::Error::InvalidArgs;
    m_size = size;
    m_ring = ring;
    m_desc = reinterpret_cast<volatile Desc*>(ring);
    m_avail = reinterpret_cast<volatile uint16_t*>(ring + desc_bytes(size));
    m_used_hdr = reinterpret_cast<volatile uint16_t*>(ring + used_offset(size));
    m_used_ring = reinterpret_cast<volatile UsedElem*>(ring + used_offset(size) + 4);
    m_avail_idx = 0;
    m_last_used = 0;
    m_broken = false;
    for (uint16_t i = 0; i < size; ++i) {
        m_in_flight[i] = false;
        m_len[i] = 0;
    }
    return {};
}

QueueLayout Virtqueue::layout() const {
    return { m_size, m_ring, m_ring + desc_bytes(m_size), m_ring + used_offset(m_size) };
}

ktl::Result<void> Virtqueue::post(uint16_t id, uint64_t addr, uint32_t len, bool device_writes) {
    if (id >= m_size || m_in_flight[id] || len == 0)
        return ktl::Error::InvalidArgs;
    m_desc[id].addr = addr;
    m_desc[id].len = len;
    m_desc[id].flags = device_writes ? kDescWrite : 0;
    m_desc[id].next = 0;
    m_avail[2 + (m_avail_idx % m_size)] = id;
    ++m_avail_idx;
    m_in_flight[id] = true;
    m_len[id] = len;
    return {};
}

ktl::Result<void> Virtqueue::post_chain(uint16_t head, const Segment* segments, uint16_t count) {
    if (count == 0 || head >= m_size || count > m_size - head || m_in_flight[head])
        return ktl::Error::InvalidArgs;
    uint32_t writable = 0;
    for (uint16_t i = 0; i < count; ++i) {
        const Segment& s = segments[i];
        if (s.len == 0 || (s.device_writes && writable > UINT32_MAX - s.len))
            return ktl::Error::InvalidArgs;
        const uint16_t d = static_cast<uint16_t>(head + i);
        m_desc[d].addr = s.addr;
        m_desc[d].len = s.len;
        m_desc[d].flags = static_cast<uint16_t>((s.device_writes ? kDescWrite : 0) | (i + 1 < count ? kDescNext : 0));
        m_desc[d].next = static_cast<uint16_t>(i + 1 < count ? d + 1 : 0);
        if (s.device_writes)
            writable += s.len;
    }
    m_avail[2 + (m_avail_idx % m_size)] = head;
    ++m_avail_idx;
    m_in_flight[head] = true;
    m_len[head] = writable;
    return {};
}

void Virtqueue::publish() {
    barrier(); // 2.6.13.3: descriptors and ring entries before the index
    m_avail[1] = m_avail_idx;
}

bool Virtqueue::wants_notification() const {
    barrier(); // 2.7.13: the published index before the flag is read, or a wake-up could be lost
    return (m_used_hdr[0] & 1) == 0;
}

bool Virtqueue::pop(Completion& out) {
    if (m_broken)
        return false;
    uint16_t used_idx = m_used_hdr[1];
    uint16_t pending = static_cast<uint16_t>(used_idx - m_last_used);
    if (pending == 0)
        return false;
    if (pending > m_size) { // the device claims more completions than buffers exist
        m_broken = true;
        return false;
    }
    barrier(); // the index before the element it covers (2.6.14)
    // Bounded: each rejected element is consumed; at most m_size of them before pending runs out.
    for (uint16_t tries = 0; tries < m_size && m_last_used != used_idx; ++tries) {
        volatile UsedElem& e = m_used_ring[m_last_used % m_size];
        uint32_t id = e.id;
        uint32_t len = e.len;
        ++m_last_used;
        if (id >= m_size || !m_in_flight[id]) {
            ++m_rejected; // not a buffer the device holds: ignore it
            continue;
        }
        m_in_flight[id] = false;
        out.id = static_cast<uint16_t>(id);
        out.len = len > m_len[id] ? m_len[id] : len;
        return true;
    }
    return false;
}

} // namespace virtio

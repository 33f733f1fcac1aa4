#include "virtio_blk.h"

#include <new>

namespace virtio {
namespace {

constexpr uint16_t kRequestQueue = 0;
constexpr uint16_t kQueueWanted = VirtioBlk::kSlots * 3; // three descriptors per slot

// 5.2.3: feature bits.
constexpr uint64_t kFeatureRo = 1ull << 5;
constexpr uint64_t kFeatureBlkSize = 1ull << 6;
constexpr uint64_t kFeatureFlush = 1ull << 9;

// 5.2.4: configuration layout.
constexpr size_t kConfigCapacity = 0;
constexpr size_t kConfigBlkSize = 20;

// 5.2.6: status byte values.
constexpr uint8_t kStatusOk = 0;
constexpr uint8_t kStatusUnset = 0xff; // written before each request: a device that never answers stays detectable

alignas(VirtioBlk) uint8_t g_storage[sizeof(VirtioBlk)];
bool g_used = false;

uint64_t le64(const uint8_t* b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | b[i];
    return v;
}

} // namespace

ktl::Result<VirtioBlk*> VirtioBlk::create(const VirtioMmio& transport, DmaAllocator dma) {
    if (transport.device_type() != DeviceType::Block || !dma)
        return ktl::Error::InvalidArgs;
    if (g_used)
        return ktl::Error::Full;
    auto* blk = new (g_storage) VirtioBlk();
    blk->m_dev = transport;
    VirtioMmio& dev = blk->m_dev;
    auto features = dev.negotiate(kFeatureRo | kFeatureBlkSize | kFeatureFlush, dev.legacy() ? 0 : feature::kVersion1);
    if (!features)
        return features.error();
    uint8_t cap[8] = {};
    if (auto r = dev.read_config(kConfigCapacity, cap, sizeof cap); !r) {
        dev.fail();
        return r.error();
    }
    blk->m_sectors = le64(cap);
    if (blk->m_sectors == 0 || blk->m_sectors > kMaxSectors) {
        dev.fail();
        return ktl::Error::Unsupported;
    }
    if (*features & kFeatureBlkSize) {
        uint8_t bs[4] = {};
        if (dev.read_config(kConfigBlkSize, bs, sizeof bs)) {
            uint32_t v = bs[0] | (bs[1] << 8) | (bs[2] << 16) | (static_cast<uint32_t>(bs[3]) << 24);
            // Only a power of two between 512 and 64 KiB is taken as the device's unit; anything else
            // is ignored (512 is always correct, if slower).
            if (v >= kSectorUnit && v <= kMaxTransfer && (v & (v - 1)) == 0)
                blk->m_block_size = v;
        }
    }
    blk->m_flush = (*features & kFeatureFlush) != 0;
    blk->m_read_only = (*features & kFeatureRo) != 0;
    if (auto r = dev.queue_setup(blk->m_queue, kRequestQueue, kQueueWanted, dma); !r) {
        dev.fail();
        return r.error();
    }
    if (blk->m_queue.size() < 3) { // not even one chain fits
        dev.fail();
        return ktl::Error::Unsupported;
    }
    auto headers = dma(4096);
    auto buffers = dma(static_cast<size_t>(kSlots) * kMaxTransfer);
    if (!headers || !buffers) {
        dev.fail();
        return ktl::Error::NoMemory;
    }
    blk->m_headers = *headers;
    blk->m_buffers = *buffers;
    // Slots past what the queue can chain are never handed out.
    for (uint16_t s = 0; s < kSlots; ++s)
        blk->m_state[s] = (s + 1u) * 3u <= blk->m_queue.size() ? SlotState::Free : SlotState::InFlight;
    dev.driver_ok();
    g_used = true;
    return blk;
}

int32_t VirtioBlk::acquire() {
    for (uint16_t s = 0; s < kSlots; ++s) {
        if (m_state[s] == SlotState::Free) {
            m_state[s] = SlotState::Acquired;
            return s;
        }
    }
    return -1;
}

void VirtioBlk::release(uint16_t slot) {
    if (slot < kSlots && m_state[slot] == SlotState::Acquired)
        m_state[slot] = SlotState::Free;
}

uint8_t* VirtioBlk::buffer(uint16_t slot) const {
    return reinterpret_cast<uint8_t*>(m_buffers + static_cast<uintptr_t>(slot % kSlots) * kMaxTransfer);
}

ktl::Result<void> VirtioBlk::submit(uint16_t slot, Op op, uint64_t sector, uint32_t len) {
    if (slot >= kSlots || m_state[slot] != SlotState::Acquired)
        return ktl::Error::InvalidArgs;
    if (m_queue.broken())
        return ktl::Error::IoError;
    if (op == Op::Flush) {
        if (!m_flush)
            return ktl::Error::Unsupported;
        len = 0;
        sector = 0;
    } else {
        if (len == 0 || len % kSectorUnit != 0 || len > kMaxTransfer)
            return ktl::Error::InvalidArgs;
        if (sector > m_sectors || len / kSectorUnit > m_sectors - sector)
            return ktl::Error::OutOfRange;
        if (op == Op::Write && m_read_only)
            return ktl::Error::Unsupported;
    }
    auto* header = reinterpret_cast<volatile Header*>(m_headers + slot * sizeof(Header));
    header->type = static_cast<uint32_t>(op);
    header->reserved = 0;
    header->sector = sector;
    auto* status = reinterpret_cast<volatile uint8_t*>(m_headers + kSlots * sizeof(Header) + slot);
    *status = kStatusUnset;
    Virtqueue::Segment chain[3];
    uint16_t n = 0;
    chain[n++] = { m_headers + slot * sizeof(Header), sizeof(Header), false };
    if (len)
        chain[n++] = { reinterpret_cast<uintptr_t>(buffer(slot)), len, op == Op::Read };
    chain[n++] = { m_headers + kSlots * sizeof(Header) + slot, 1, true };
    TRY_VOID(m_queue.post_chain(static_cast<uint16_t>(slot * 3), chain, n));
    m_state[slot] = SlotState::InFlight;
    m_op[slot] = op;
    m_len[slot] = len;
    m_queue.publish();
    m_dev.notify(kRequestQueue);
    return {};
}

void VirtioBlk::handle_irq() {
    m_dev.take_interrupt();
    m_irqs = m_irqs + 1;
    Virtqueue::Completion c {};
    // Bounded: pop consumes at least one used element per call and never more than the queue holds.
    for (uint16_t i = 0; i < m_queue.size() && m_queue.pop(c); ++i) {
        if (c.id % 3 != 0 || c.id / 3 >= kSlots || m_state[c.id / 3] != SlotState::InFlight)
            continue; // the queue only posts slot heads, so this cannot happen; never trust it anyway
        const uint16_t slot = static_cast<uint16_t>(c.id / 3);
        const uint8_t st = *reinterpret_cast<volatile uint8_t*>(m_headers + kSlots * sizeof(Header) + slot);
        ktl::Error result = ktl::Error::None;
        if (st != kStatusOk)
            result = st == kStatusUnset ? ktl::Error::Corrupt : ktl::Error::IoError;
        // 5.2.6: the used length counts the bytes written: the data of a read and the status byte.
        else if (m_op[slot] == Op::Read && c.len < m_len[slot] + 1)
            result = ktl::Error::Corrupt;
        switch (m_op[slot]) {
        case Op::Read:
            ++m_reads;
            m_bytes_read += result == ktl::Error::None ? m_len[slot] : 0;
            break;
        case Op::Write:
            ++m_writes;
            m_bytes_written += result == ktl::Error::None ? m_len[slot] : 0;
            break;
        case Op::Flush: ++m_flushes; break;
        }
        if (result != ktl::Error::None)
            ++m_errors;
        m_state[slot] = SlotState::Free;
        if (m_done)
            m_done(m_done_ctx, slot, result);
    }
}

VirtioBlk::Stats VirtioBlk::stats() const {
    uint32_t in_flight = 0;
    for (uint16_t s = 0; s < kSlots; ++s)
        in_flight += (m_state[s] == SlotState::InFlight && (s + 1u) * 3u <= m_queue.size()) ? 1 : 0;
    return { m_irqs,       m_reads,         m_writes,  m_flushes,       m_errors, m_queue.rejected(),
             m_bytes_read, m_bytes_written, in_flight, m_queue.broken() };
}

} // namespace virtio

#include "buddy.h"

namespace mm {

ktl::Result<void> BuddyAllocator::init(uint64_t base, size_t pages, PageFrame* metadata, size_t metadata_len) {
    if ((base & (kPageSize - 1)) != 0 || pages == 0 || pages >= kNone || !metadata ||
        metadata_len < metadata_bytes(pages))
        return ktl::Error::InvalidArgs;
    m_base = base;
    m_pages = pages;
    m_frames = metadata;
    for (size_t i = 0; i < pages; ++i)
        m_frames[i] = PageFrame { kNone, kNone, 0, Reserved, 0 };
    for (auto& head : m_heads)
        head = kNone;
    m_free_pages = 0;
    m_total_pages = 0;
    for (auto& n : m_owned)
        n = 0;
    return {};
}

void BuddyAllocator::push(unsigned order, uint32_t index) {
    PageFrame& f = m_frames[index];
    f.state = FreeHead;
    f.order = static_cast<uint8_t>(order);
    f.prev = kNone;
    f.next = m_heads[order];
    if (f.next != kNone)
        m_frames[f.next].prev = index;
    m_heads[order] = index;
}

void BuddyAllocator::unlink(unsigned order, uint32_t index) {
    PageFrame& f = m_frames[index];
    if (f.prev != kNone)
        m_frames[f.prev].next = f.next;
    else
        m_heads[order] = f.next;
    if (f.next != kNone)
        m_frames[f.next].prev = f.prev;
    f.next = f.prev = kNone;
    f.state = Tail;
}

// Buddies are found by index arithmetic relative to m_base, so blocks are aligned to their size
// relative to the managed span (and to physical addresses when base is suitably aligned).
void BuddyAllocator::free_block(uint32_t index, unsigned order) {
    while (order < kMaxOrder) {
        uint32_t buddy = index ^ (1u << order);
        if (buddy >= m_pages || (static_cast<uint64_t>(buddy) + (1u << order)) > m_pages)
            break;
        const PageFrame& b = m_frames[buddy];
        if (b.state != FreeHead || b.order != order)
            break;
        unlink(order, buddy);
        index = index < buddy ? index : buddy;
        ++order;
    }
    push(order, index);
}

void BuddyAllocator::add_free_range(uint64_t addr, uint64_t size) {
    uint64_t start = (addr + kPageSize - 1) & ~(kPageSize - 1);
    uint64_t end = (addr + size) & ~(kPageSize - 1);
    if (end <= start || start < m_base)
        return;
    uint64_t first = (start - m_base) >> kPageShift;
    uint64_t last = (end - m_base) >> kPageShift; // exclusive
    if (last > m_pages)
        last = m_pages;
    // Released a whole aligned block at a time, the largest that fits the run of still-reserved
    // pages at i: one free_block per block rather than per page (page by page, 512 MiB took 30-50
    // ms of boot under QEMU's emulation, before the first MCP answer). The free lists end up the
    // same: merging makes the maximal blocks of a set of free pages unique.
    uint64_t i = first;
    while (i < last) {
        if (m_frames[i].state != Reserved) {
            ++i; // already given: never hand a page out twice
            continue;
        }
        unsigned order = 0;
        while (order < kMaxOrder && (i & (1ull << order)) == 0 && i + (2ull << order) <= last)
            ++order;
        uint64_t n = 1ull << order;
        for (uint64_t k = 0; k < n; ++k) {
            if (m_frames[i + k].state != Reserved) { // a page given earlier: the block ends before it
                n = k;
                break;
            }
        }
        while (n & (n - 1)) // the largest power of two within the reserved run
            n &= n - 1;
        order = static_cast<unsigned>(__builtin_ctzll(n));
        for (uint64_t k = 0; k < n; ++k) {
            m_frames[i + k].state = Tail;
            m_frames[i + k].owner = 0;
        }
        m_free_pages += n;
        m_total_pages += n;
        free_block(static_cast<uint32_t>(i), order);
        i += n;
    }
}

ktl::Result<uint64_t> BuddyAllocator::alloc(unsigned order, uint16_t owner) {
    if (order > kMaxOrder)
        return ktl::Error::InvalidArgs;
    unsigned o = order;
    while (o <= kMaxOrder && m_heads[o] == kNone)
        ++o;
    if (o > kMaxOrder)
        return ktl::Error::NoMemory;
    uint32_t index = m_heads[o];
    unlink(o, index);
    while (o > order) { // split, returning upper halves to the free lists
        --o;
        push(o, index + (1u << o));
    }
    PageFrame& f = m_frames[index];
    f.state = AllocatedHead;
    f.order = static_cast<uint8_t>(order);
    f.owner = owner;
    if (owner < kCountedOwners)
        m_owned[owner] += 1ull << order;
    m_free_pages -= 1ull << order;
    return m_base + (static_cast<uint64_t>(index) << kPageShift);
}

ktl::Result<void> BuddyAllocator::free(uint64_t addr, unsigned order) {
    if (order > kMaxOrder || (addr & (kPageSize - 1)) != 0 || !owns(addr))
        return ktl::Error::InvalidArgs;
    uint32_t index = static_cast<uint32_t>((addr - m_base) >> kPageShift);
    PageFrame& f = m_frames[index];
    if (f.state != AllocatedHead || f.order != order)
        return ktl::Error::InvalidArgs;
    if (f.owner < kCountedOwners)
        m_owned[f.owner] -= 1ull << order;
    f.owner = 0;
    // No longer an allocated head whatever happens next: when it merges with a lower buddy the
    // merged block's head is that buddy, and a second free of this address must be refused.
    f.state = Tail;
    m_free_pages += 1ull << order;
    free_block(index, order);
    return {};
}

BuddyStats BuddyAllocator::stats() const {
    BuddyStats s;
    s.total_pages = m_total_pages;
    s.free_pages = m_free_pages;
    s.used_pages = m_total_pages - m_free_pages;
    for (unsigned o = 0; o <= kMaxOrder; ++o) {
        uint64_t n = 0;
        for (uint32_t i = m_heads[o]; i != kNone && n <= m_pages; i = m_frames[i].next)
            ++n;
        s.free_blocks[o] = n;
        if (n)
            s.largest_free_order = o;
    }
    return s;
}

uint64_t BuddyAllocator::pages_owned_by(uint16_t owner) const {
    if (owner < kCountedOwners)
        return m_owned[owner];
    uint64_t n = 0;
    for (size_t i = 0; i < m_pages; ++i) {
        if (m_frames[i].state == AllocatedHead && m_frames[i].owner == owner)
            n += 1ull << m_frames[i].order;
    }
    return n;
}

} // namespace mm

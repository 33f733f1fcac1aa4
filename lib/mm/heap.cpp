#include "heap.h"

#include "buddy.h"

namespace mm {
namespace {

constexpr uint32_t kAllocMagic = 0xb45a17a1;
constexpr uint32_t kFreeMagic = 0xf7eef7ee;
constexpr uint32_t kSlabMagic = 0x51ab51ab;
constexpr uint8_t kLarge = 0xff;
constexpr size_t kSlabHeader = 64;
constexpr size_t kLargeHeader = 48; // Heap::Large, before the block's AllocHeader

// Precedes every allocation; 16 bytes keep user pointers 16-byte aligned.
struct AllocHeader {
    uint32_t magic;
    uint16_t owner;
    uint8_t cls;   // size class index, or kLarge
    uint8_t order; // page order for large blocks
    uint64_t size; // requested bytes
};
static_assert(sizeof(AllocHeader) == Heap::kHeaderSize);

unsigned order_for(size_t bytes) {
    unsigned order = 0;
    while ((kPageSize << order) < bytes)
        ++order;
    return order;
}

} // namespace

// Lives at the start of its page; slots follow.
struct Heap::Slab {
    uint32_t magic;
    uint16_t cls;
    uint16_t in_use;
    uint16_t capacity;
    uint16_t pad;
    uint32_t free_head; // offset of the first free slot within the page, 0 = none
    Slab* next;         // partial list links
    Slab* prev;
    Slab* all_next; // every slab (Heap::m_slabs)
    Slab* all_prev;
    bool on_partial;
};
static_assert(sizeof(Heap::Slab) <= kSlabHeader);

// Starts a large block; the allocation's header follows it.
struct Heap::Large {
    Large* next;
    Large* prev;
    uint64_t reserved[4];
};
static_assert(sizeof(Heap::Large) == kLargeHeader);

namespace {

template <typename T>
void link_front(T*& head, T* node, T* T::*next, T* T::*prev) {
    node->*next = head;
    node->*prev = nullptr;
    if (head)
        head->*prev = node;
    head = node;
}

template <typename T>
void unlink(T*& head, T* node, T* T::*next, T* T::*prev) {
    if (node->*prev)
        (node->*prev)->*next = node->*next;
    else
        head = node->*next;
    if (node->*next)
        (node->*next)->*prev = node->*prev;
    node->*next = node->*prev = nullptr;
}

} // namespace


int Heap::class_for(size_t gross) {
    for (size_t i = 0; i < kNumClasses; ++i) {
        if (gross <= kClassSizes[i])
            return static_cast<int>(i);
    }
    return -1;
}

bool Heap::charge(uint16_t owner, uint64_t bytes) {
    if (owner >= kMaxOwners)
        return false;
    if (m_limit[owner] != 0 && m_used[owner] + bytes > m_limit[owner])
        return false;
    m_used[owner] += bytes;
    return true;
}

ktl::Result<void*> Heap::alloc(size_t size, uint16_t owner) {
    if (size == 0 || size > kMaxSize || owner >= kMaxOwners)
        return ktl::Error::InvalidArgs;
    size_t gross = size + kHeaderSize;
    int cls = class_for(gross);
    auto r = cls >= 0 ? alloc_small(cls, owner) : alloc_large(gross, owner);
    if (!r) {
        ++m_stats.failed;
        return r.error();
    }
    auto* h = static_cast<AllocHeader*>(*r);
    h->size = size;
    ++m_stats.live_allocations;
    m_stats.bytes_requested += size;
    return static_cast<void*>(reinterpret_cast<uint8_t*>(h) + kHeaderSize);
}

ktl::Result<void*> Heap::alloc_small(int cls, uint16_t owner) {
    size_t slot = kClassSizes[cls];
    if (!charge(owner, slot))
        return ktl::Error::NoMemory;
    Slab* slab = m_partial[cls];
    if (!slab) {
        auto page = m_pages.alloc_pages(0, owner);
        if (!page) {
            m_used[owner] -= slot;
            return ktl::Error::NoMemory;
        }
        slab = reinterpret_cast<Slab*>(*page);
        slab->magic = kSlabMagic;
        slab->cls = static_cast<uint16_t>(cls);
        slab->in_use = 0;
        slab->capacity = static_cast<uint16_t>((kPageSize - kSlabHeader) / slot);
        slab->free_head = 0;
        // Thread the free list through the slots, lowest address first.
        for (size_t i = slab->capacity; i-- > 0;) {
            uint32_t off = static_cast<uint32_t>(kSlabHeader + i * slot);
            auto* h = reinterpret_cast<AllocHeader*>(reinterpret_cast<uint8_t*>(slab) + off);
            h->magic = kFreeMagic;
            h->size = slab->free_head;
            slab->free_head = off;
        }
        slab->next = nullptr;
        slab->prev = nullptr;
        slab->on_partial = true;
        m_partial[cls] = slab;
        link_front(m_slabs, slab, &Slab::all_next, &Slab::all_prev);
        ++m_stats.slab_pages;
    }
    uint32_t off = slab->free_head;
    auto* h = reinterpret_cast<AllocHeader*>(reinterpret_cast<uint8_t*>(slab) + off);
    slab->free_head = static_cast<uint32_t>(h->size);
    ++slab->in_use;
    if (slab->free_head == 0) { // full: leave the partial list
        m_partial[cls] = slab->next;
        if (slab->next)
            slab->next->prev = nullptr;
        slab->next = slab->prev = nullptr;
        slab->on_partial = false;
    }
    h->magic = kAllocMagic;
    h->owner = owner;
    h->cls = static_cast<uint8_t>(cls);
    h->order = 0;
    return static_cast<void*>(h);
}

ktl::Result<void*> Heap::alloc_large(size_t gross, uint16_t owner) {
    unsigned order = order_for(gross + kLargeHeader);
    uint64_t bytes = kPageSize << order;
    if (!charge(owner, bytes))
        return ktl::Error::NoMemory;
    auto block = m_pages.alloc_pages(order, owner);
    if (!block) {
        m_used[owner] -= bytes;
        return ktl::Error::NoMemory;
    }
    auto* large = reinterpret_cast<Large*>(*block);
    link_front(m_large, large, &Large::next, &Large::prev);
    auto* h = reinterpret_cast<AllocHeader*>(*block + kLargeHeader);
    h->magic = kAllocMagic;
    h->owner = owner;
    h->cls = kLarge;
    h->order = static_cast<uint8_t>(order);
    m_stats.large_pages += 1ull << order;
    return static_cast<void*>(h);
}

ktl::Result<void> Heap::free(void* ptr) {
    if (!ptr || (reinterpret_cast<uintptr_t>(ptr) & 15) != 0)
        return ktl::Error::InvalidArgs;
    auto* h = reinterpret_cast<AllocHeader*>(static_cast<uint8_t*>(ptr) - kHeaderSize);
    if (h->magic != kAllocMagic || h->owner >= kMaxOwners)
        return ktl::Error::InvalidArgs; // not ours, or already freed
    uint16_t owner = h->owner;
    --m_stats.live_allocations;
    m_stats.bytes_requested -= h->size;
    if (h->cls == kLarge) {
        if (((reinterpret_cast<uintptr_t>(h) - kLargeHeader) & (kPageSize - 1)) != 0)
            return ktl::Error::InvalidArgs; // a large block's header sits at a fixed place in its first page
        unsigned order = h->order;
        h->magic = kFreeMagic;
        m_used[owner] -= kPageSize << order;
        m_stats.large_pages -= 1ull << order;
        auto* large = reinterpret_cast<Large*>(reinterpret_cast<uint8_t*>(h) - kLargeHeader);
        unlink(m_large, large, &Large::next, &Large::prev);
        m_pages.free_pages(reinterpret_cast<uint64_t>(large), order);
        return {};
    }
    if (h->cls >= kNumClasses)
        return ktl::Error::Corrupt;
    auto* slab = reinterpret_cast<Slab*>(reinterpret_cast<uintptr_t>(h) & ~(kPageSize - 1));
    if (slab->magic != kSlabMagic || slab->cls != h->cls || slab->in_use == 0)
        return ktl::Error::Corrupt;
    size_t slot = kClassSizes[h->cls];
    const uintptr_t at = reinterpret_cast<uintptr_t>(h) - reinterpret_cast<uintptr_t>(slab);
    if (at < kSlabHeader || (at - kSlabHeader) % slot != 0)
        return ktl::Error::InvalidArgs; // not the start of a slot: a forged header inside one
    m_used[owner] -= slot;
    h->magic = kFreeMagic;
    h->size = slab->free_head;
    slab->free_head = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h) - reinterpret_cast<uintptr_t>(slab));
    --slab->in_use;
    int cls = h->cls;
    if (slab->in_use == 0) {
        // Empty: give the page back (unlink first if it is on the partial list).
        if (slab->on_partial)
            unlink(m_partial[cls], slab, &Slab::next, &Slab::prev);
        unlink(m_slabs, slab, &Slab::all_next, &Slab::all_prev);
        slab->magic = 0;
        --m_stats.slab_pages;
        m_pages.free_pages(reinterpret_cast<uint64_t>(slab), 0);
        return {};
    }
    if (!slab->on_partial) {
        link_front(m_partial[cls], slab, &Slab::next, &Slab::prev);
        slab->on_partial = true;
    }
    return {};
}

Heap::Released Heap::release_owner(uint16_t owner) {
    Released released;
    if (owner >= kMaxOwners)
        return released;
    auto take = [&](AllocHeader* h, uint64_t gross) {
        released.bytes += gross;
        ++released.allocations;
        (void)free(reinterpret_cast<uint8_t*>(h) + kHeaderSize); // ours by construction
    };
    for (Large* b = m_large; b && m_used[owner] != 0;) {
        Large* next = b->next;
        auto* h = reinterpret_cast<AllocHeader*>(reinterpret_cast<uint8_t*>(b) + kLargeHeader);
        if (h->owner == owner)
            take(h, kPageSize << h->order);
        b = next;
    }
    for (Slab* slab = m_slabs; slab && m_used[owner] != 0;) {
        Slab* next = slab->all_next;
        size_t slot = kClassSizes[slab->cls];
        for (size_t i = 0, n = slab->capacity; i < n; ++i) {
            auto* h = reinterpret_cast<AllocHeader*>(reinterpret_cast<uint8_t*>(slab) + kSlabHeader + i * slot);
            if (h->magic != kAllocMagic || h->owner != owner)
                continue;
            bool last = slab->in_use == 1; // freeing it returns the page: stop reading it
            take(h, slot);
            if (last)
                break;
        }
        slab = next;
    }
    m_limit[owner] = 0;
    return released;
}

} // namespace mm

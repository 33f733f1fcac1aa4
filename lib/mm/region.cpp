#include "region.h"

#include <cstring>

namespace mm {

ktl::Result<Region> Region::create(std::span<std::byte> memory, RegionPolicy policy, uint32_t object_size) {
    if (memory.empty() || static_cast<uint8_t>(policy) > 3)
        return ktl::Error::InvalidArgs;
    Region r;
    r.m_base = memory.data();
    r.m_policy = policy;
    r.m_capacity = memory.size();
    // Whatever the pages held before is nobody's business: bytes never written read as zero.
    memset(memory.data(), 0, memory.size());
    if (policy == RegionPolicy::Slab) {
        if (object_size == 0 || object_size > memory.size())
            return ktl::Error::InvalidArgs;
        // n objects + ceil(n / 8) bitmap bytes must fit.
        uint64_t n = (memory.size() * 8) / (uint64_t(object_size) * 8 + 1);
        if (n == 0)
            return ktl::Error::InvalidArgs;
        if (n > kMaxSlabObjects)
            n = kMaxSlabObjects;
        r.m_object_size = object_size;
        r.m_objects = static_cast<uint32_t>(n);
        r.m_capacity = n * object_size;
        r.m_bitmap = reinterpret_cast<uint8_t*>(memory.data() + r.m_capacity);
        memset(r.m_bitmap, 0, (n + 7) / 8);
    } else if (policy == RegionPolicy::Ring) {
        if (object_size == 0 || object_size > memory.size())
            return ktl::Error::InvalidArgs;
        r.m_object_size = object_size;
        r.m_objects = static_cast<uint32_t>(memory.size() / object_size < kMaxRingRecords ? memory.size() / object_size
                                                                                          : kMaxRingRecords);
        r.m_capacity = uint64_t(r.m_objects) * object_size;
    } else if (object_size != 0) {
        return ktl::Error::InvalidArgs;
    }
    return r;
}

bool Region::object_live(uint32_t index) const { return index < m_objects && (m_bitmap[index / 8] >> (index % 8)) & 1; }

uint64_t Region::first_held() const {
    uint64_t n = appended();
    return n > m_objects ? n - m_objects : 0;
}

bool Region::readable(uint64_t offset, uint64_t len) const {
    if (m_policy == RegionPolicy::Ring) { // one whole record, still held
        if (len != m_object_size || offset % m_object_size != 0)
            return false;
        uint64_t record = offset / m_object_size;
        return record >= first_held() && record < appended();
    }
    if (offset > m_capacity || len > m_capacity - offset)
        return false;
    switch (m_policy) {
    case RegionPolicy::Immutable:
    case RegionPolicy::AppendOnly: return offset + len <= m_fill;
    case RegionPolicy::Ring: return false; // handled above
    case RegionPolicy::Slab: {
        if (len == 0)
            return object_live(static_cast<uint32_t>(offset / m_object_size));
        uint64_t first = offset / m_object_size, last = (offset + len - 1) / m_object_size;
        return first == last && object_live(static_cast<uint32_t>(first)); // one object at a time
    }
    }
    return false;
}

ktl::Result<void> Region::write(uint64_t offset, std::span<const std::byte> data) {
    if (offset > m_capacity || data.size() > m_capacity - offset)
        return ktl::Error::OutOfRange;
    if (m_policy == RegionPolicy::AppendOnly || m_policy == RegionPolicy::Ring)
        return ktl::Error::AccessDenied; // only append() may add bytes
    if (m_policy == RegionPolicy::Immutable && m_sealed)
        return ktl::Error::AccessDenied;
    if (m_policy == RegionPolicy::Slab && !readable(offset, data.size()))
        return ktl::Error::AccessDenied; // outside a live object
    if (!data.empty())
        memcpy(m_base + offset, data.data(), data.size());
    if (m_policy == RegionPolicy::Immutable && offset + data.size() > m_fill)
        m_fill = offset + data.size();
    return {};
}

ktl::Result<uint64_t> Region::append(std::span<const std::byte> data) {
    if (m_policy == RegionPolicy::Ring) {
        if (m_sealed)
            return ktl::Error::AccessDenied;
        if (data.size() != m_object_size)
            return ktl::Error::InvalidArgs; // whole records only
        uint64_t at = m_fill;               // logical offset of the new record
        memcpy(m_base + (at / m_object_size % m_objects) * m_object_size, data.data(), data.size());
        m_fill += data.size();
        return at;
    }
    if (m_policy != RegionPolicy::AppendOnly)
        return ktl::Error::AccessDenied;
    if (m_sealed)
        return ktl::Error::AccessDenied;
    if (data.size() > m_capacity - m_fill)
        return ktl::Error::Full;
    uint64_t at = m_fill;
    if (!data.empty())
        memcpy(m_base + at, data.data(), data.size());
    m_fill += data.size();
    return at;
}

ktl::Result<void> Region::seal() {
    if (m_policy == RegionPolicy::Slab)
        return ktl::Error::Unsupported;
    if (m_sealed)
        return ktl::Error::Exists;
    m_sealed = true;
    return {};
}

ktl::Result<size_t> Region::read(uint64_t offset, std::span<std::byte> out) const {
    if (!readable(offset, out.size()))
        return ktl::Error::OutOfRange;
    if (m_policy == RegionPolicy::Ring)
        offset = (offset / m_object_size % m_objects) * m_object_size;
    if (!out.empty())
        memcpy(out.data(), m_base + offset, out.size());
    return out.size();
}

ktl::Result<uint32_t> Region::alloc_object() {
    if (m_policy != RegionPolicy::Slab)
        return ktl::Error::Unsupported;
    for (uint32_t i = 0; i < m_objects; ++i) {
        if (!object_live(i)) {
            m_bitmap[i / 8] |= uint8_t(1u << (i % 8));
            ++m_live;
            memset(m_base + uint64_t(i) * m_object_size, 0, m_object_size); // no stale data leaks
            return i;
        }
    }
    return ktl::Error::Full;
}

ktl::Result<void> Region::free_object(uint32_t index) {
    if (m_policy != RegionPolicy::Slab)
        return ktl::Error::Unsupported;
    if (!object_live(index))
        return ktl::Error::InvalidArgs;
    m_bitmap[index / 8] &= uint8_t(~(1u << (index % 8)));
    --m_live;
    return {};
}

uint64_t Region::used() const {
    if (m_policy == RegionPolicy::Ring)
        return (appended() - first_held()) * m_object_size;
    return m_policy == RegionPolicy::Slab ? uint64_t(m_live) * m_object_size : m_fill;
}

} // namespace mm

#pragma once
// Memory regions with a write policy, the kernel object behind vector arenas and logs:
//  - Immutable: filled with write(), then seal()ed; after that no byte ever changes.
//  - AppendOnly: bytes are only ever added at the end (append); what was written stays.
//  - Slab: fixed-size objects allocated and freed by index; writes stay inside live objects.
//  - Ring: fixed-size records only ever appended, never changed; when full, the oldest record
//    gives way to the newest. Offsets are logical (record number x size, growing for ever), so a
//    reader asks for a record by its number and is refused once it has been overwritten.
// Reads never go past what the policy has made valid. Hardware-free: the region manages a
// span the caller provides (pages from the kernel allocator, host memory in tests).
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>

namespace mm {

enum class RegionPolicy : uint8_t { Immutable = 0, AppendOnly = 1, Slab = 2, Ring = 3 };

class Region {
public:
    static constexpr uint32_t kMaxSlabObjects = 65536;
    static constexpr uint32_t kMaxRingRecords = 1u << 20;

    Region() = default;
    // Slab regions keep a free-list bitmap at the end of memory (computed here).
    static ktl::Result<Region> create(std::span<std::byte> memory, RegionPolicy policy, uint32_t object_size = 0);

    ktl::Result<void> write(uint64_t offset, std::span<const std::byte> data);
    ktl::Result<uint64_t> append(std::span<const std::byte> data); // returns the offset written at
    ktl::Result<void> seal();
    ktl::Result<size_t> read(uint64_t offset, std::span<std::byte> out) const;
    ktl::Result<uint32_t> alloc_object();
    ktl::Result<void> free_object(uint32_t index);

    RegionPolicy policy() const { return m_policy; }
    bool sealed() const { return m_sealed; }
    uint64_t capacity() const { return m_capacity; }
    uint64_t used() const; // Immutable: high-water mark; AppendOnly: fill; Slab: live objects x size; Ring: bytes held
    // Ring: records appended in all, and the number of the oldest still held.
    uint64_t appended() const { return m_policy == RegionPolicy::Ring ? m_fill / m_object_size : 0; }
    uint64_t first_held() const;
    uint32_t object_size() const { return m_object_size; }
    uint32_t live_objects() const { return m_live; }

private:
    bool object_live(uint32_t index) const;
    // A byte range is valid for access when it lies inside what the policy allows.
    bool readable(uint64_t offset, uint64_t len) const;

    std::byte* m_base = nullptr;
    uint64_t m_capacity = 0;
    uint64_t m_fill = 0; // AppendOnly fill / Immutable high-water mark
    RegionPolicy m_policy = RegionPolicy::Immutable;
    bool m_sealed = false;
    uint32_t m_object_size = 0;
    uint32_t m_objects = 0;
    uint32_t m_live = 0;
    uint8_t* m_bitmap = nullptr; // Slab: one bit per object, set = live
};

} // namespace mm

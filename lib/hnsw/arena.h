#pragma once
// Bump allocator over caller-provided memory. The index takes all of its memory from one
// Arena at creation; nothing is ever returned to it (slots and link blocks are recycled by
// the index itself), so there is no free().
#include <cstddef>
#include <cstdint>
#include <span>

namespace hnsw {

class Arena {
public:
    Arena() = default;
    explicit Arena(std::span<std::byte> memory) : m_base(memory.data()), m_size(memory.size()) {}

    // nullptr when the request does not fit; align must be a power of two.
    void* allocate(size_t bytes, size_t align) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(m_base);
        const uintptr_t at = (base + m_used + (align - 1)) & ~uintptr_t(align - 1);
        const size_t offset = at - base;
        if (offset > m_size || bytes > m_size - offset)
            return nullptr;
        m_used = offset + bytes;
        return m_base + offset;
    }

    template <typename T>
    T* allocate_array(size_t count, size_t align = alignof(T)) {
        if (count > SIZE_MAX / sizeof(T))
            return nullptr;
        return static_cast<T*>(allocate(count * sizeof(T), align));
    }

    size_t used() const { return m_used; }
    size_t capacity() const { return m_size; }
    size_t remaining() const { return m_size - m_used; }

private:
    std::byte* m_base = nullptr;
    size_t m_size = 0;
    size_t m_used = 0;
};

} // namespace hnsw

#pragma once
// Storage for the link lists of levels >= 1. A node of level L owns one block of L lists of
// (1 + m) words: [count, link0, ..., link(m-1)]. Blocks are carved from a word array and
// recycled through one free list per block size, so deletes and re-inserts never leak.
#include <cstdint>

#include <hnsw/limits.h>

namespace hnsw {

class LinkPool {
public:
    LinkPool() = default;
    LinkPool(uint32_t* words, size_t capacity, uint32_t list_words)
        : m_words(words), m_capacity(capacity), m_list_words(list_words) {
        for (auto& head : m_free)
            head = kNone;
    }

    // kNone when the pool is exhausted.
    uint32_t allocate(uint32_t levels) {
        if (m_free[levels] != kNone) {
            uint32_t block = m_free[levels];
            m_free[levels] = m_words[block];
            return block;
        }
        size_t words = size_t(levels) * m_list_words;
        if (words > m_capacity - m_top || m_top + words >= kNone)
            return kNone;
        uint32_t block = uint32_t(m_top);
        m_top += words;
        return block;
    }

    void release(uint32_t block, uint32_t levels) {
        m_words[block] = m_free[levels];
        m_free[levels] = block;
    }

    uint32_t* list(uint32_t block, uint32_t level) { return m_words + block + size_t(level - 1) * m_list_words; }
    const uint32_t* list(uint32_t block, uint32_t level) const {
        return m_words + block + size_t(level - 1) * m_list_words;
    }

    size_t words_used() const { return m_top; }
    size_t capacity() const { return m_capacity; }

private:
    uint32_t* m_words = nullptr;
    size_t m_capacity = 0;
    size_t m_top = 0;
    uint32_t m_list_words = 0;
    uint32_t m_free[kMaxLevel + 1] {};
};

} // namespace hnsw

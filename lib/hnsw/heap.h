#pragma once
// Fixed-capacity binary heaps of (distance, slot) pairs over caller memory. Ties on distance
// are broken by slot so the order is total and every build visits nodes in the same order.
#include <cstdint>

namespace hnsw {

struct Candidate {
    float dist;
    uint32_t slot;
};

inline bool closer(const Candidate& a, const Candidate& b) {
    return a.dist < b.dist || (a.dist == b.dist && a.slot < b.slot);
}

// kMaxAtTop: the farthest candidate is at the top (result set W of the paper); otherwise the
// closest is (candidate queue C).
template <bool kMaxAtTop>
class FixedHeap {
public:
    FixedHeap() = default;
    FixedHeap(Candidate* storage, uint32_t capacity) : m_data(storage), m_capacity(capacity) {}

    uint32_t size() const { return m_size; }
    uint32_t capacity() const { return m_capacity; }
    bool empty() const { return m_size == 0; }
    bool full() const { return m_size == m_capacity; }
    const Candidate& top() const { return m_data[0]; }
    Candidate* data() { return m_data; }
    void clear() { m_size = 0; }
    // Drops entries past n; callers use it on storage they sorted (a sorted array is a heap).
    void truncate(uint32_t n) {
        if (n < m_size)
            m_size = n;
    }

    // Caller checks full() first.
    void push(Candidate c) {
        uint32_t i = m_size++;
        while (i > 0) {
            uint32_t parent = (i - 1) / 2;
            if (!above(c, m_data[parent]))
                break;
            m_data[i] = m_data[parent];
            i = parent;
        }
        m_data[i] = c;
    }

    Candidate pop() {
        Candidate top = m_data[0];
        Candidate last = m_data[--m_size];
        if (m_size > 0)
            sift_down(0, last);
        return top;
    }

    // Keeps only the entries for which keep(c) is true, then restores the heap property.
    template <typename Keep>
    void retain(Keep keep) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < m_size; ++i)
            if (keep(m_data[i]))
                m_data[n++] = m_data[i];
        m_size = n;
        for (uint32_t i = m_size / 2; i-- > 0;)
            sift_down(i, m_data[i]);
    }

private:
    static bool above(const Candidate& a, const Candidate& b) { return kMaxAtTop ? closer(b, a) : closer(a, b); }

    void sift_down(uint32_t i, Candidate c) {
        for (;;) {
            uint32_t child = 2 * i + 1;
            if (child >= m_size)
                break;
            if (child + 1 < m_size && above(m_data[child + 1], m_data[child]))
                ++child;
            if (!above(m_data[child], c))
                break;
            m_data[i] = m_data[child];
            i = child;
        }
        m_data[i] = c;
    }

    Candidate* m_data = nullptr;
    uint32_t m_capacity = 0;
    uint32_t m_size = 0;
};

} // namespace hnsw

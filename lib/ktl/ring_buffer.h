#pragma once
// Fixed-capacity single-producer/single-consumer byte ring. The producer and consumer may be
// an interrupt handler and a task: indices are atomics with acquire/release ordering, and the
// capacity is a power of two so wrap-around is a mask, never a division.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ktl {

template <size_t Capacity>
class RingBuffer {
    static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0, "capacity must be a power of two");

public:
    size_t capacity() const { return Capacity; }
    size_t size() const { return m_head.load(std::memory_order_acquire) - m_tail.load(std::memory_order_acquire); }
    bool empty() const { return size() == 0; }
    bool full() const { return size() == Capacity; }

    bool push(uint8_t byte) {
        size_t head = m_head.load(std::memory_order_relaxed);
        if (head - m_tail.load(std::memory_order_acquire) == Capacity)
            return false;
        m_data[head & (Capacity - 1)] = byte;
        m_head.store(head + 1, std::memory_order_release);
        return true;
    }

    bool pop(uint8_t& byte) {
        size_t tail = m_tail.load(std::memory_order_relaxed);
        if (m_head.load(std::memory_order_acquire) == tail)
            return false;
        byte = m_data[tail & (Capacity - 1)];
        m_tail.store(tail + 1, std::memory_order_release);
        return true;
    }

    // Copies up to len bytes in; returns how many fit.
    size_t write(const uint8_t* src, size_t len) {
        size_t n = 0;
        while (n < len && push(src[n]))
            ++n;
        return n;
    }

    size_t read(uint8_t* dst, size_t len) {
        size_t n = 0;
        while (n < len && pop(dst[n]))
            ++n;
        return n;
    }

private:
    std::atomic<size_t> m_head { 0 }; // next write position (monotonic)
    std::atomic<size_t> m_tail { 0 }; // next read position (monotonic)
    uint8_t m_data[Capacity] {};
};

} // namespace ktl

#pragma once
// A byte ring over storage the owner provides, of any capacity (the network endpoint's are 12
// and 19 KiB). `head` and `tail` only grow, so full and empty need no flag; they are 64-bit
// because a position is the count modulo the capacity, which 2^32 is no multiple of: 32-bit
// counts wrapping after 4 GiB through one connection would jump to another place in the ring.
// Bytes move in at most two copies, one each side of the wrap (not a byte at a time, each with a
// division for its place). Not synchronised: the owner serialises producer and consumer.
#include <cstdint>
#include <cstring>

namespace ktl {

struct ByteRing {
    uint8_t* data = nullptr;
    uint32_t cap = 0;
    uint64_t head = 0; // bytes ever written
    uint64_t tail = 0; // bytes ever read

    uint32_t used() const { return static_cast<uint32_t>(head - tail); }
    uint32_t room() const { return cap - used(); }

    // Copies in as much of src[0..n) as fits; returns how much.
    uint32_t put(const uint8_t* src, uint32_t n) {
        n = n < room() ? n : room();
        if (n == 0)
            return 0;
        const auto at = static_cast<uint32_t>(head % cap);
        const uint32_t first = n < cap - at ? n : cap - at;
        memcpy(data + at, src, first);
        memcpy(data, src + first, n - first);
        head += n;
        return n;
    }

    // Copies out up to n queued bytes; returns how many.
    uint32_t get(uint8_t* dst, uint32_t n) {
        n = n < used() ? n : used();
        if (n == 0)
            return 0;
        const auto at = static_cast<uint32_t>(tail % cap);
        const uint32_t first = n < cap - at ? n : cap - at;
        memcpy(dst, data + at, first);
        memcpy(dst + first, data, n - first);
        tail += n;
        return n;
    }

    // The longest run of queued bytes that is contiguous in memory, from front().
    uint32_t contiguous() const {
        if (used() == 0)
            return 0;
        const auto run = static_cast<uint32_t>(cap - tail % cap);
        return run < used() ? run : used();
    }
    const uint8_t* front() const { return data + tail % cap; }
    void consume(uint32_t n) { tail += n < used() ? n : used(); }
};

} // namespace ktl

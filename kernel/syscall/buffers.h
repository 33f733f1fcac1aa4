#pragma once
// Validation of buffers tasks pass to system calls: the kernel never writes through a pointer
// that is not mapped, writable RAM (kernel text, rodata, the DTB and guard pages are refused).
#include <cstdint>

#include "../arch/aarch64/mmu.h"

extern "C" char __kernel_start[], __text_end[];

namespace buffers {

constexpr uint64_t kMaxBuffer = 1u << 20;

inline bool range_ok(uint64_t p, uint64_t len, uint64_t max = kMaxBuffer) {
    return p != 0 && len <= max && p + len > p;
}

inline bool writable(uint64_t p, uint64_t len, uint64_t max = kMaxBuffer) {
    if (!range_ok(p, len, max))
        return false;
    for (uint64_t page = p & ~0xfffull; page < p + len; page += 4096) {
        if (!mmu::is_writable_ram(page))
            return false;
    }
    return true;
}

inline bool readable(uint64_t p, uint64_t len, uint64_t max = kMaxBuffer) {
    if (!range_ok(p, len, max))
        return false;
    for (uint64_t page = p & ~0xfffull; page < p + len; page += 4096) {
        if (!mmu::is_mapped(page) || !mmu::is_mapped_ram(page))
            return false;
    }
    return true;
}

inline bool is_kernel_text(uint64_t p) {
    return p >= reinterpret_cast<uint64_t>(__kernel_start) && p < reinterpret_cast<uint64_t>(__text_end);
}

// The same checks for the typed arguments of decode.h: a user pointer is checked as its address.
template <typename T>
inline uint64_t address(T* p) {
    return reinterpret_cast<uint64_t>(p);
}
inline bool range_ok(const void* p, uint64_t len, uint64_t max = kMaxBuffer) { return range_ok(address(p), len, max); }
inline bool writable(const void* p, uint64_t len, uint64_t max = kMaxBuffer) { return writable(address(p), len, max); }
inline bool readable(const void* p, uint64_t len, uint64_t max = kMaxBuffer) { return readable(address(p), len, max); }
template <typename R, typename... A>
inline bool is_kernel_text(R (*fn)(A...)) {
    return is_kernel_text(address(fn));
}

} // namespace buffers

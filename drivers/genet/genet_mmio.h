#pragma once
// The GENET driver's bus in the kernel: its registers by MMIO at the controller's base, delays by
// the generic timer, and the cache maintenance its DMA needs (the Pi 4's GENET is not coherent
// with the CPU's caches).
#include "../mmio_window.h"
#include "genet.h"

namespace genet {

class MmioBus final : public MmioWindow<Bus> {
public:
    explicit MmioBus(uintptr_t base) : MmioWindow(base) {}
    // Clean and invalidate both ways: a receive buffer may still hold lines the CPU dirtied
    // (zeroed at allocation), which must not be written back over what the device put there.
    void dma_clean(const void* p, size_t bytes) override { by_line(p, bytes); }
    void dma_invalidate(const void* p, size_t bytes) override { by_line(p, bytes); }

private:
    static void by_line(const void* p, size_t bytes) {
        auto a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63);
        const auto end = reinterpret_cast<uintptr_t>(p) + bytes;
        for (; a < end; a += 64)
            asm volatile("dc civac, %0" ::"r"(a) : "memory");
        asm volatile("dsb sy" ::: "memory");
    }
};

} // namespace genet

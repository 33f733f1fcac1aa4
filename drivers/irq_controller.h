#pragma once
// An interrupt controller as the kernel's IRQ layer sees it. GicV2 and GicV3 implement it;
// which one is used is decided by the device tree.
#include <cstdint>

class IrqController {
public:
    static constexpr uint32_t kSpurious = 1023;

    // Per-CPU interface setup (called on each core as it comes up).
    virtual void init_cpu() = 0;
    virtual void enable(uint32_t intid, bool edge_triggered) = 0;
    virtual void disable(uint32_t intid) = 0;
    // Returns the INTID of the highest-priority pending interrupt, or >= 1020 for spurious.
    virtual uint32_t acknowledge() = 0;
    virtual void end_of_interrupt(uint32_t intid) = 0;
    virtual uint32_t max_intid() const = 0;
    virtual const char* name() const = 0;

protected:
    ~IrqController() = default;
};

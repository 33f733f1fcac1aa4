#pragma once
// ARM GICv2 (IHI 0048B): distributor + memory-mapped CPU interface. QEMU virt gic-version=2,
// Raspberry Pi 4's GIC-400.
#include "irq_controller.h"

#include <ktl/result.h>

class GicV2 final : public IrqController {
public:
    static ktl::Result<GicV2*> create(uintptr_t distributor, uintptr_t cpu_interface);

    void init_cpu() override;
    void enable(uint32_t intid, bool edge_triggered) override;
    void disable(uint32_t intid) override;
    uint32_t acknowledge() override;
    void end_of_interrupt(uint32_t intid) override;
    uint32_t max_intid() const override { return m_lines - 1; }
    const char* name() const override { return "gicv2"; }

private:
    GicV2() = default;
    void init_distributor();

    uintptr_t m_dist = 0;
    uintptr_t m_cpu = 0;
    uint32_t m_lines = 0;
};

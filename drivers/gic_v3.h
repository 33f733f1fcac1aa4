#pragma once
// ARM GICv3 (IHI 0069): distributor with affinity routing, one redistributor per CPU, and the
// system-register CPU interface (ICC_*_EL1). QEMU virt gic-version=3.
#include "irq_controller.h"

#include <ktl/result.h>

class GicV3 final : public IrqController {
public:
    static ktl::Result<GicV3*> create(uintptr_t distributor, uintptr_t redistributors, uint64_t redist_size);

    void init_cpu() override;
    void enable(uint32_t intid, bool edge_triggered) override;
    void disable(uint32_t intid) override;
    uint32_t acknowledge() override;
    void end_of_interrupt(uint32_t intid) override;
    uint32_t max_intid() const override { return m_lines - 1; }
    const char* name() const override { return "gicv3"; }

private:
    GicV3() = default;
    void init_distributor();
    ktl::Result<uintptr_t> find_redistributor(uint64_t mpidr) const;
    void wait_for_rwp() const;

    uintptr_t m_dist = 0;
    uintptr_t m_redist_base = 0;
    uint64_t m_redist_size = 0;
    uintptr_t m_rd = 0;  // this CPU's redistributor (RD_base)
    uintptr_t m_sgi = 0; // its SGI_base frame
    uint32_t m_lines = 0;
};

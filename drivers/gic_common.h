#pragma once
// Register layout the GICv2 and GICv3 distributors share (IHI 0048B 4.3.13, IHI 0069 12.9.9).
#include "mmio.h"

#include <cstdint>

namespace gic {

// ICFGR: two bits per interrupt, bit 1 of the pair set = edge-triggered. `cfgr` is the base of
// the register array that covers `intid` (GICD_ICFGR, or GICR_ICFGR0 for SGIs/PPIs).
inline void set_trigger(uintptr_t cfgr, uint32_t intid, bool edge_triggered) {
    uintptr_t reg = cfgr + (intid / 16) * 4;
    uint32_t bit = 1u << ((intid % 16) * 2 + 1);
    uint32_t cfg = mmio::read32(reg);
    mmio::write32(reg, edge_triggered ? (cfg | bit) : (cfg & ~bit));
}

} // namespace gic

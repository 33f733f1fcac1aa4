#pragma once
// Thin wrappers over AArch64 system registers and barriers. Nothing here touches MMIO.
#include <cstdint>

#define READ_SYSREG(reg) \
    ({ \
        uint64_t _v; \
        asm volatile("mrs %0, " #reg : "=r"(_v)); \
        _v; \
    })
#define WRITE_SYSREG(reg, val) asm volatile("msr " #reg ", %0" ::"r"((uint64_t)(val)) : "memory")

namespace arch {

inline void isb() { asm volatile("isb" ::: "memory"); }
inline void dsb_sy() { asm volatile("dsb sy" ::: "memory"); }
inline void dsb_ish() { asm volatile("dsb ish" ::: "memory"); }
inline void wfi() { asm volatile("wfi" ::: "memory"); }
inline void wfe() { asm volatile("wfe" ::: "memory"); }
inline void sev() { asm volatile("sev" ::: "memory"); }

inline void irq_enable() { asm volatile("msr daifclr, #2" ::: "memory"); }
inline void irq_disable() { asm volatile("msr daifset, #2" ::: "memory"); }
inline bool irqs_enabled() { return (READ_SYSREG(daif) & (1u << 7)) == 0; }

// Saves DAIF and masks IRQs; restores on scope exit. Used around state shared with handlers.
class IrqGuard {
public:
    IrqGuard() : m_daif(READ_SYSREG(daif)) { irq_disable(); }
    ~IrqGuard() { WRITE_SYSREG(daif, m_daif); }
    IrqGuard(const IrqGuard&) = delete;
    IrqGuard& operator=(const IrqGuard&) = delete;

private:
    uint64_t m_daif;
};

inline uint32_t current_el() { return static_cast<uint32_t>((READ_SYSREG(CurrentEL) >> 2) & 3); }
inline uint64_t mpidr() { return READ_SYSREG(mpidr_el1); }
inline uint64_t midr() { return READ_SYSREG(midr_el1); }

// FEAT_RNG (ID_AA64ISAR0_EL1.RNDR, bits 63:60): the RNDR register returns 64 random bits from
// the CPU's own source (QEMU `-cpu max` has it; Cortex-A72/A76 do not).
inline bool has_rndr() { return (READ_SYSREG(id_aa64isar0_el1) >> 60) != 0; }
// One read; false when the source could not produce bits in time (PSTATE.Z set), as allowed.
inline bool rndr(uint64_t& out) {
    uint64_t ok;
    asm volatile("mrs %0, s3_3_c2_c4_0\n cset %1, ne" : "=r"(out), "=r"(ok) : : "cc");
    return ok != 0;
}

// MIDR_EL1 part numbers (ARM DDI 0487 D17.2.100) for the banner.
inline const char* cpu_part_name(uint64_t midr_value) {
    uint32_t implementer = (midr_value >> 24) & 0xff;
    uint32_t part = (midr_value >> 4) & 0xfff;
    if (implementer != 0x41)
        return "unknown";
    switch (part) {
    case 0xd03: return "cortex-a53";
    case 0xd04: return "cortex-a35";
    case 0xd05: return "cortex-a55";
    case 0xd07: return "cortex-a57";
    case 0xd08: return "cortex-a72";
    case 0xd09: return "cortex-a73";
    case 0xd0b: return "cortex-a76";
    case 0xd0c: return "neoverse-n1";
    case 0xd40: return "neoverse-v1";
    case 0xd49: return "neoverse-n2";
    default: return "arm-unknown";
    }
}

} // namespace arch

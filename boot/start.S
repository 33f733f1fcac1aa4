// Kernel entry. Runs with the MMU off, at EL2 or EL1, on every core the firmware starts.
// Core 0 drops to EL1 if needed, sets up the boot stack, clears BSS, enables FP/SIMD and
// calls boot_main(dtb). Other cores the firmware starts here park in WFE; cores started later
// through PSCI CPU_ON enter at secondary_entry (kernel/smp.h).

#include "sysregs.h"

// EL2 -> EL1 as the kernel runs it: EL1 AArch64, its counter and timer, no FP/SIMD traps, the
// GICv3 system registers, no stage 2; then eret to `target` at EL1h with DAIF masked.
.macro el2_to_el1 target
    ldr     x1, =HCR_EL2_RW
    msr     hcr_el2, x1
    mov     x1, #3
    msr     cnthctl_el2, x1
    msr     cntvoff_el2, xzr
    ldr     x1, =CPTR_EL2_RES1
    msr     cptr_el2, x1
    mrs     x1, id_aa64pfr0_el1
    ubfx    x1, x1, #24, #4
    cbz     x1, 91f
    mrs     x1, ICC_SRE_EL2
    mov     x2, #0x9
    orr     x1, x1, x2
    msr     ICC_SRE_EL2, x1
    isb
91: msr     vttbr_el2, xzr
    ldr     x1, =SCTLR_EL1_BOOT
    msr     sctlr_el1, x1
    mov     x1, #SPSR_EL1H_DAIF_MASKED
    msr     spsr_el2, x1
    adr     x1, \target
    msr     elr_el2, x1
.endm

    .section .text.boot, "ax"
    .global _start
_start:
    mov     x19, x0                     // DTB pointer from firmware/QEMU (0 for an ELF on virt)
    mrs     x1, mpidr_el1
    and     x1, x1, #0xff               // Aff0: core number within the cluster
    cbz     x1, 1f
    b       park_secondary

1:  mrs     x1, CurrentEL
    lsr     x1, x1, #2
    cmp     x1, #2
    b.eq    from_el2
    cmp     x1, #1
    b.eq    at_el1
    b       park_secondary              // EL3 is not supported: stop here rather than misbehave

from_el2:
    // EL1 runs AArch64; EL1 may use the physical counter and timer (CNTHCTL_EL2.EL1PCTEN|EL1PCEN);
    // no FP/SIMD traps to EL2 (CPTR_EL2.TFP = 0); the GICv3 system-register interface for EL1.
    el2_to_el1 at_el1
    mov     x1, #1
    adr     x2, boot_entry_el
    str     x1, [x2]                    // remember we came from EL2 (reported in the banner)
    eret

at_el1:
    ldr     x1, =SCTLR_EL1_BOOT         // MMU and caches off until boot_main sets them up
    msr     sctlr_el1, x1
    isb
    ldr     x1, =__boot_stack_top
    mov     sp, x1
    mov     x29, xzr
    mov     x30, xzr

    // Zero BSS (and TLS .tbss) with aligned 16-byte stores: MMU off means Device memory,
    // where unaligned accesses fault.
    ldr     x1, =__bss_start
    ldr     x2, =__bss_end
3:  cmp     x1, x2
    b.hs    4f
    stp     xzr, xzr, [x1], #16
    b       3b

4:  mov     x1, #CPACR_EL1_FPEN
    msr     cpacr_el1, x1               // FP/SIMD usable at EL1 (the vector store uses NEON)
    isb
    ldr     x1, =__tls_base
    sub     x1, x1, #16
    msr     tpidr_el0, x1

    adr     x1, vector_table
    msr     vbar_el1, x1
    isb

    mov     x0, x19
    bl      boot_main
    b       halt_forever

park_secondary:
    wfe
    b       park_secondary

// A core PSCI CPU_ON started (kernel/smp.cpp): x0 = its boot block's address (identity-mapped, so
// the same with the MMU off), which holds its stack and the boot core's MMU registers. The MMU
// comes on with the boot core's tables before any C++ runs; then secondary_main(block).
//   block: +0 stack top | +8 MAIR | +16 TCR | +24 TTBR0 | +32 SCTLR | +40 TPIDR_EL0
    .global secondary_entry
secondary_entry:
    mov     x19, x0
    mrs     x1, CurrentEL
    lsr     x1, x1, #2
    cmp     x1, #2
    b.ne    secondary_el1
    el2_to_el1 secondary_el1
    eret

secondary_el1:
    ldr     x1, =SCTLR_EL1_BOOT
    msr     sctlr_el1, x1
    isb
    ldr     x1, [x19, #0]
    mov     sp, x1
    mov     x29, xzr
    mov     x30, xzr
    mov     x1, #CPACR_EL1_FPEN
    msr     cpacr_el1, x1
    ldr     x1, [x19, #8]
    msr     mair_el1, x1
    ldr     x1, [x19, #16]
    msr     tcr_el1, x1
    ldr     x1, [x19, #24]
    msr     ttbr0_el1, x1
    isb
    tlbi    vmalle1
    dsb     nsh
    isb
    adr     x1, vector_table
    msr     vbar_el1, x1
    ldr     x1, [x19, #32]
    msr     sctlr_el1, x1               // MMU and caches on, the boot core's tables
    isb
    ldr     x1, [x19, #40]
    msr     tpidr_el0, x1
    mov     x0, x19
    bl      secondary_main
    b       halt_forever

    .global halt_forever
halt_forever:
    msr     daifset, #0xf
5:  wfi
    b       5b

    .data
    .balign 8
    .global boot_entry_el
boot_entry_el:
    .quad   0

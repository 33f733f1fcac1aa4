// Exception vector table (ARM DDI 0487 D1.10.2): 16 entries of 0x80 bytes.
// Every entry builds a full TrapFrame (general registers, SP_EL0, ELR, SPSR, ESR, FAR and the
// FP/SIMD state, since C++ handlers may use SIMD registers) and calls
//     TrapFrame* exception_dispatch(TrapFrame* frame, uint64_t kind)
// which returns the frame to resume: the same one, or another task's (context switch).
// Layout must match kernel/arch/aarch64/trap_frame.h.

#define FRAME_SIZE   832
#define FP_OFFSET    288

    .macro VENTRY kind
    .balign 0x80
    sub     sp, sp, #FRAME_SIZE
    stp     x0, x1, [sp, #0]
    mov     x1, #\kind
    b       exception_common
    .endm

// Exceptions taken on SP_EL1 (boot context, or a fault inside a handler) first check that a
// frame fits above the bottom of the stack SP_EL1 is on: a handler that overflowed the
// exception or boot stack into its guard page would otherwise fault again on every store of the
// frame, walking SP further down for ever. x0 and x1 are parked in TPIDR_EL1 and TPIDRRO_EL0
// (no EL0 here, the kernel uses neither) because nothing may be stored yet.
    .macro VENTRY_SPX kind
    .balign 0x80
    msr     tpidr_el1, x0
    msr     tpidrro_el0, x1
    mov     x0, sp
    sub     x0, x0, #(FRAME_SIZE + 16)     // the frame and the frame record below it
    adrp    x1, __exception_stack_bottom
    add     x1, x1, :lo12:__exception_stack_bottom
    cmp     x0, x1
    b.hs    1f                             // fits on the exception stack
    adrp    x1, __boot_stack_bottom
    add     x1, x1, :lo12:__boot_stack_bottom
    cmp     x0, x1
    b.lo    kernel_stack_overflow_entry    // below the boot stack: its guard, or the overflow stack
    adrp    x1, __boot_stack_top
    add     x1, x1, :lo12:__boot_stack_top
    cmp     x0, x1
    b.hs    kernel_stack_overflow_entry    // between the two stacks: the exception stack's guard
1:  mrs     x0, tpidr_el1
    mrs     x1, tpidrro_el0
    sub     sp, sp, #FRAME_SIZE
    stp     x0, x1, [sp, #0]
    mov     x1, #\kind
    b       exception_common
    .endm

    .section .text.vectors, "ax"
    .balign 0x800
    .global vector_table
vector_table:
    VENTRY 0    // current EL, SP0: sync
    VENTRY 1    //                 irq
    VENTRY 2    //                 fiq
    VENTRY 3    //                 serror
    VENTRY_SPX 4    // current EL, SPx: sync
    VENTRY_SPX 5    //                 irq
    VENTRY_SPX 6    //                 fiq
    VENTRY_SPX 7    //                 serror
    VENTRY 8    // lower EL, AArch64: sync
    VENTRY 9    //                    irq
    VENTRY 10   //                    fiq
    VENTRY 11   //                    serror
    VENTRY 12   // lower EL, AArch32: sync
    VENTRY 13   //                    irq
    VENTRY 14   //                    fiq
    VENTRY 15   //                    serror

// SP_EL1 has run into a guard page (or is on the overflow stack already). Report it from the
// overflow stack: kernel_stack_overflow(sp, fp, elr, far) does not return. A second overflow
// while reporting gets the same stack again (the C++ side then only prints one line); a third
// stops the core.
kernel_stack_overflow_entry:
    adrp    x0, overflow_entries
    ldr     x1, [x0, :lo12:overflow_entries]
    add     x1, x1, #1
    str     x1, [x0, :lo12:overflow_entries]
    cmp     x1, #2
    b.hi    halt_forever
    adrp    x0, __overflow_stack_top
    add     x0, x0, :lo12:__overflow_stack_top
    mov     x1, sp
    mov     sp, x0
    mov     x0, x1                          // the SP that overflowed
    mov     x1, x29
    mrs     x2, elr_el1
    mrs     x3, far_el1
    mrs     x4, esr_el1
    bl      kernel_stack_overflow
    b       halt_forever

exception_common:
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    stp     x6, x7, [sp, #48]
    stp     x8, x9, [sp, #64]
    stp     x10, x11, [sp, #80]
    stp     x12, x13, [sp, #96]
    stp     x14, x15, [sp, #112]
    stp     x16, x17, [sp, #128]
    stp     x18, x19, [sp, #144]
    stp     x20, x21, [sp, #160]
    stp     x22, x23, [sp, #176]
    stp     x24, x25, [sp, #192]
    stp     x26, x27, [sp, #208]
    stp     x28, x29, [sp, #224]
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #240]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #256]
    mrs     x24, esr_el1
    mrs     x25, far_el1
    stp     x24, x25, [sp, #272]
    add     x2, sp, #FP_OFFSET
    stp     q0, q1, [x2, #0]
    stp     q2, q3, [x2, #32]
    stp     q4, q5, [x2, #64]
    stp     q6, q7, [x2, #96]
    stp     q8, q9, [x2, #128]
    stp     q10, q11, [x2, #160]
    stp     q12, q13, [x2, #192]
    stp     q14, q15, [x2, #224]
    stp     q16, q17, [x2, #256]
    stp     q18, q19, [x2, #288]
    stp     q20, q21, [x2, #320]
    stp     q22, q23, [x2, #352]
    stp     q24, q25, [x2, #384]
    stp     q26, q27, [x2, #416]
    stp     q28, q29, [x2, #448]
    stp     q30, q31, [x2, #480]
    mrs     x3, fpsr
    mrs     x4, fpcr
    str     x3, [x2, #512]
    str     x4, [x2, #520]

    mov     x0, sp
    // A frame record pointing at the interrupted code makes backtraces cross the exception.
    stp     x29, x22, [sp, #-16]!
    mov     x29, sp
    bl      exception_dispatch
    // fall through: resume the frame the dispatcher returned (x0)

// exception_restore(TrapFrame* frame): also the way into the first task. The frame must sit
// at the top of the SP_EL1 exception stack, where the next exception will build its own.
    .global exception_restore
exception_restore:
    mov     sp, x0
    add     x2, sp, #FP_OFFSET
    ldp     q0, q1, [x2, #0]
    ldp     q2, q3, [x2, #32]
    ldp     q4, q5, [x2, #64]
    ldp     q6, q7, [x2, #96]
    ldp     q8, q9, [x2, #128]
    ldp     q10, q11, [x2, #160]
    ldp     q12, q13, [x2, #192]
    ldp     q14, q15, [x2, #224]
    ldp     q16, q17, [x2, #256]
    ldp     q18, q19, [x2, #288]
    ldp     q20, q21, [x2, #320]
    ldp     q22, q23, [x2, #352]
    ldp     q24, q25, [x2, #384]
    ldp     q26, q27, [x2, #416]
    ldp     q28, q29, [x2, #448]
    ldp     q30, q31, [x2, #480]
    ldr     x3, [x2, #512]
    ldr     x4, [x2, #520]
    msr     fpsr, x3
    msr     fpcr, x4

    ldp     x22, x23, [sp, #256]
    msr     elr_el1, x22
    msr     spsr_el1, x23
    ldp     x30, x21, [sp, #240]
    msr     sp_el0, x21
    ldp     x0, x1, [sp, #0]
    ldp     x2, x3, [sp, #16]
    ldp     x4, x5, [sp, #32]
    ldp     x6, x7, [sp, #48]
    ldp     x8, x9, [sp, #64]
    ldp     x10, x11, [sp, #80]
    ldp     x12, x13, [sp, #96]
    ldp     x14, x15, [sp, #112]
    ldp     x16, x17, [sp, #128]
    ldp     x18, x19, [sp, #144]
    ldp     x20, x21, [sp, #160]
    ldp     x22, x23, [sp, #176]
    ldp     x24, x25, [sp, #192]
    ldp     x26, x27, [sp, #208]
    ldp     x28, x29, [sp, #224]
    add     sp, sp, #FRAME_SIZE
    eret

    .data
    .balign 8
overflow_entries:
    .quad   0

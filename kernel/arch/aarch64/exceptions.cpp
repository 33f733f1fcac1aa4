// C++ side of the vector table: IRQs go to the interrupt layer; everything else is a fault
// that is reported with a decoded register dump and ends in the panic path.
#include "cpu.h"
#include "trap_frame.h"

#include "../../console.h"
#include "../../current.h"
#include "../../fault_injection.h"
#include "../../irq.h"
#include "../../mm/stack_arena.h"
#include "../../panic.h"
#include "../../sched/scheduler.h"
#include "../../syscall/dispatch.h"

#include <aarch64/esr.h>
#include <drivers/serial_port.h>
#include <ktl/format.h>

namespace arch {

const char* exception_kind_name(ExceptionKind kind) {
    static const char* const names[16] = {
        "synchronous (current EL, SP0)",   "IRQ (current EL, SP0)",         "FIQ (current EL, SP0)",
        "SError (current EL, SP0)",        "synchronous (current EL, SPx)", "IRQ (current EL, SPx)",
        "FIQ (current EL, SPx)",           "SError (current EL, SPx)",      "synchronous (lower EL, AArch64)",
        "IRQ (lower EL, AArch64)",         "FIQ (lower EL, AArch64)",       "SError (lower EL, AArch64)",
        "synchronous (lower EL, AArch32)", "IRQ (lower EL, AArch32)",       "FIQ (lower EL, AArch32)",
        "SError (lower EL, AArch32)",
    };
    auto i = static_cast<uint64_t>(kind);
    return i < 16 ? names[i] : "invalid";
}

static void dump_frame(const TrapFrame& f, ExceptionKind kind) {
    char esr_text[160];
    aarch64::format_esr(f.esr, esr_text, sizeof esr_text);
    aarch64::EsrInfo info = aarch64::decode_esr(f.esr);
    console::printf_polled("\n*** EXCEPTION: %s in task '%s'\n", exception_kind_name(kind), current_task_name());
    fault_injection::report_hook();
    console::printf_polled("ESR  0x%016llx  %s\n", static_cast<unsigned long long>(f.esr), esr_text);
    console::printf_polled("FAR  0x%016llx%s\n", static_cast<unsigned long long>(f.far),
                           info.is_abort && !info.far_valid ? " (not valid)" : "");
    console::printf_polled("ELR  0x%016llx  SPSR 0x%016llx\n", static_cast<unsigned long long>(f.elr),
                           static_cast<unsigned long long>(f.spsr));
    uint64_t sp = reinterpret_cast<uint64_t>(&f) + sizeof(TrapFrame);
    for (int i = 0; i < 31; i += 2) {
        if (i == 30)
            console::printf_polled("x30  0x%016llx  sp   0x%016llx\n", static_cast<unsigned long long>(f.x[30]),
                                   static_cast<unsigned long long>(sp));
        else
            console::printf_polled("x%-2d  0x%016llx  x%-2d  0x%016llx\n", i, static_cast<unsigned long long>(f.x[i]),
                                   i + 1, static_cast<unsigned long long>(f.x[i + 1]));
    }
}

} // namespace arch

// A fault in a task (taken from EL1t: the SP0 vectors) kills that task; the kernel and the
// other tasks keep running. A fault in exception context itself (SPx vectors) is a kernel bug.
// The first faults are dumped in full; later ones get their one line: a tool faulting on every call
// must not hold the CPU (IRQs masked) for a polled register dump each time.
static constexpr uint32_t kFullDumps = 16;
static uint32_t g_task_faults = 0;

static arch::TrapFrame* task_fault(arch::TrapFrame* frame, arch::ExceptionKind kind) {
    if (auto* port = console::port())
        port->flush();
    if (++g_task_faults <= kFullDumps) {
        arch::dump_frame(*frame, kind);
        kpanic::print_backtrace(frame->x[29], frame->elr);
        if (g_task_faults == kFullDumps)
            console::printf_polled("(later task faults: one line each, no register dump)\n");
    }
    const char* reason = "unhandled exception";
    aarch64::EsrInfo info = aarch64::decode_esr(frame->esr);
    if (info.is_abort && stack_arena::is_guard(frame->far))
        reason = "stack overflow (guard page hit)";
    else if (info.is_abort)
        reason = info.ec == 0x25 || info.ec == 0x24 ? "data abort" : "instruction abort";
    else if (info.ec == 0x3c)
        reason = "breakpoint";
    else if (info.ec == 0x00)
        reason = "undefined instruction";
    console::printf_polled("task '%s' killed: %s\n", current_task_name(), reason);
    sched::kill_current_fault(reason);
    return sched::switch_if_needed(frame);
}

extern "C" arch::TrapFrame* exception_dispatch(arch::TrapFrame* frame, uint64_t kind_value) {
    auto kind = static_cast<arch::ExceptionKind>(kind_value);
    switch (kind) {
    case arch::ExceptionKind::CurSp0Irq: irq::dispatch(); return sched::switch_if_needed(frame);
    case arch::ExceptionKind::CurSp0Sync:
        if (sched::started() && ((frame->esr >> 26) & 0x3f) == 0x15) { // SVC from a task
            syscall::dispatch(*frame);
            return sched::switch_if_needed(frame);
        }
        if (sched::started() && sched::current())
            return task_fault(frame, kind);
        break;
    case arch::ExceptionKind::CurSpxIrq:
        irq::dispatch(); // boot context, before the scheduler runs
        return frame;
    default: break;
    }
    char what[96];
    ktl::Formatter(what, sizeof what)
        .append("%s (ESR 0x%llx, ELR 0x%llx, FAR 0x%llx)", arch::exception_kind_name(kind),
                static_cast<unsigned long long>(frame->esr), static_cast<unsigned long long>(frame->elr),
                static_cast<unsigned long long>(frame->far));
    kpanic::enter(what);
    if (auto* port = console::port())
        port->flush();
    arch::dump_frame(*frame, kind);
    kpanic::print_backtrace(frame->x[29], frame->elr);
    console::printf_polled("KERNEL PANIC in task '%s': unhandled %s\n", current_task_name(),
                           arch::exception_kind_name(kind));
    kpanic::finish();
}

extern "C" char __overflow_stack_bottom[], __stack_guard_1[], __stack_guard_2[];

// Entered from boot/vectors.S on the overflow stack when SP_EL1 could not hold an exception frame.
extern "C" [[noreturn]] void kernel_stack_overflow(uint64_t sp, uint64_t fp, uint64_t elr, uint64_t far, uint64_t esr) {
    arch::irq_disable();
    const char* which = "SP_EL1 outside every kernel stack";
    if (sp >= reinterpret_cast<uint64_t>(__stack_guard_2))
        which = "exception stack";
    else if (sp >= reinterpret_cast<uint64_t>(__stack_guard_1))
        which = "boot stack";
    else if (sp >= reinterpret_cast<uint64_t>(__overflow_stack_bottom))
        which = "overflow stack";
    char what[96];
    ktl::Formatter(what, sizeof what)
        .append("kernel stack overflow (%s, SP 0x%llx, ELR 0x%llx)", which, static_cast<unsigned long long>(sp),
                static_cast<unsigned long long>(elr));
    kpanic::enter(what);
    console::printf_polled("\nKERNEL PANIC in task '%s': kernel stack overflow: %s guard page hit\n",
                           current_task_name(), which);
    console::printf_polled("SP   0x%016llx  FAR 0x%016llx\nELR  0x%016llx  ESR 0x%016llx\n",
                           static_cast<unsigned long long>(sp), static_cast<unsigned long long>(far),
                           static_cast<unsigned long long>(elr), static_cast<unsigned long long>(esr));
    kpanic::print_backtrace(fp, elr);
    kpanic::finish();
}

#include "fault_injection.h"

#include "log.h"
#include "sched/scheduler.h"

#include <cstdint>

extern "C" char __kernel_start[];

namespace fault_injection {
namespace {
// A data word to "execute": lives in RW+XN memory, so fetching it must fault.
uint32_t g_not_code[4] = { 0xd503201f, 0xd503201f, 0xd65f03c0, 0 };
// volatile: the store must land before the fault it precedes, which the compiler cannot see.
volatile bool g_fault_in_report = false;

void load_unmapped() {
    // 0x1000 lies in the unmapped null guard.
    volatile uint64_t* p = reinterpret_cast<volatile uint64_t*>(0x1000);
    (void)*p;
}

// Each frame keeps a live 512-byte buffer, so the recursion reaches the guard page quickly and
// the compiler can neither drop the buffer nor turn the recursion into a loop.
__attribute__((noinline)) uint64_t recurse(uint64_t depth) {
    volatile uint8_t frame[512];
    if (depth > (1ull << 40)) // never: no stack holds 2^40 frames
        return 0;
    frame[depth % sizeof frame] = static_cast<uint8_t>(depth);
    return recurse(depth + 1) + frame[(depth * 7) % sizeof frame];
}

// Runs recurse() on the exception stack (boot context: nothing else uses it before tasks start).
void recurse_on_exception_stack() {
    asm volatile("adrp x9, __exception_stack_top\n"
                 "add  x9, x9, :lo12:__exception_stack_top\n"
                 "mov  sp, x9\n"
                 "mov  x0, #0\n"
                 "bl   %0\n" ::"S"(recurse)
                 : "x0", "x9", "x30", "memory");
}
} // namespace

namespace {
bool g_lwip_assert = false;
} // namespace

bool lwip_assert_armed() { return g_lwip_assert; }

void report_hook() {
    if (g_fault_in_report)
        load_unmapped();
}

void trigger(std::string_view kind) {
    KLOG_WARN("fault injection: %.*s", static_cast<int>(kind.size()), kind.data());
    bool boot_only = kind == "nested" || kind == "boot_stack" || kind == "exception_stack";
    if (boot_only && sched::started()) { // the kernel stacks belong to the exception path by now
        KLOG_ERROR("fault injection: %.*s only at boot (boot argument fault=)", static_cast<int>(kind.size()),
                   kind.data());
        return;
    }
    if (kind == "lwip_assert") {
        g_lwip_assert = true;
        KLOG_WARN("fault injection: the TCP echo service fails an lwIP assertion on data starting LWIP-ASSERT");
        return;
    }
    if (kind == "data") {
        load_unmapped();
    } else if (kind == "nested") {
        g_fault_in_report = true;
        load_unmapped();
    } else if (kind == "boot_stack") {
        (void)recurse(0);
    } else if (kind == "exception_stack") {
        recurse_on_exception_stack();
    } else if (kind == "write") {
        volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(__kernel_start);
        *p = 0;
    } else if (kind == "exec") {
        auto fn = reinterpret_cast<void (*)()>(reinterpret_cast<uintptr_t>(g_not_code));
        fn();
    } else if (kind == "undef") {
        asm volatile(".inst 0x00000000"); // permanently undefined (UDF #0)
    } else if (kind == "brk") {
        asm volatile("brk #0x42");
    } else {
        KLOG_ERROR(
            "fault injection: unknown kind (data|write|exec|undef|brk|nested|boot_stack|exception_stack|lwip_assert)");
        return;
    }
    KLOG_ERROR("fault injection: the fault did not happen");
}

} // namespace fault_injection

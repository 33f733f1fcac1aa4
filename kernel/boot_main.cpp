// First C++ code, entered from boot/start.S with the MMU off. Compiled with -mstrict-align
// and without loop-to-memset conversion: until enable_early() returns, memory is Device-typed.
#include "arch/aarch64/mmu.h"
#include "board/board.h"

#include <cstdint>

extern "C" char __kernel_start[];
extern "C" void (*__init_array_start[])();
extern "C" void (*__init_array_end[])();

void kernel_main(uintptr_t dtb_from_firmware);

extern "C" [[noreturn]] void boot_main(uintptr_t dtb) {
    uintptr_t dtb_guess = dtb != 0 ? dtb : board::kDtbFallback;
    mmu::enable_early(reinterpret_cast<uintptr_t>(__kernel_start), dtb_guess);
    // Static constructors run only now that normal memory is cacheable and unaligned-safe.
    for (auto* ctor = __init_array_start; ctor != __init_array_end; ++ctor)
        (*ctor)();
    kernel_main(dtb);
    for (;;)
        asm volatile("wfi");
}

// First C++ code, entered from boot/start.S with the MMU off. Compiled with -mstrict-align
// and without loop-to-memset conversion: until enable_early() returns, memory is Device-typed.
#include "arch/aarch64/mmu.h"
#include "board/board.h"

#include <cstdint>

extern "C" char __kernel_start[], __text_end[], __rodata_end[], __kernel_end[];
extern "C" char __stack_guard_0[], __stack_guard_1[], __stack_guard_2[];
extern "C" void (*__init_array_start[])();
extern "C" void (*__init_array_end[])();

void kernel_main(uintptr_t dtb, uintptr_t x0);

namespace {

constexpr uint32_t kFdtMagic = 0xd00dfeed;
constexpr uint64_t kPage = 4096;

uint32_t read_be32(uintptr_t addr) { return __builtin_bswap32(*reinterpret_cast<volatile const uint32_t*>(addr)); }

bool has_fdt_magic(uintptr_t addr) { return addr != 0 && (addr & 7) == 0 && read_be32(addr) == kFdtMagic; }

// x0 from the firmware when it holds a flattened device tree (an ATAG list or 0 does not),
// else the board's fallback address, else 0.
uintptr_t find_dtb(uintptr_t from_firmware) {
    if (has_fdt_magic(from_firmware))
        return from_firmware;
    if (has_fdt_magic(board::fallback_dtb()))
        return board::fallback_dtb();
    return 0;
}

// The DTB's own size when it is believable; one page otherwise, enough for the parser to read the
// header and refuse it cleanly.
uint64_t dtb_window(uintptr_t dtb) {
    uint32_t total = read_be32(dtb + 4);
    if (total < 40 || total > board::kMaxDtbSize)
        return kPage;
    return total;
}

uint64_t addr(const char* symbol) { return reinterpret_cast<uint64_t>(symbol); }

} // namespace

extern "C" [[noreturn]] void boot_main(uintptr_t dtb_from_firmware) {
    uintptr_t dtb = find_dtb(dtb_from_firmware);
    // The early window: the image's sections with their final permissions, the stack guards
    // unmapped, the device tree read-only; everything else device memory (the console UART is
    // found in the DTB and used before the final table exists), never executable.
    mmu::Region regions[] = {
        { 0, mmu::kVaSpan, mmu::Kind::Device },
        { dtb, dtb ? dtb_window(dtb) : 0, mmu::Kind::KernelRodata },
        { addr(__kernel_start), addr(__text_end) - addr(__kernel_start), mmu::Kind::KernelText },
        { addr(__text_end), addr(__rodata_end) - addr(__text_end), mmu::Kind::KernelRodata },
        { addr(__rodata_end), addr(__kernel_end) - addr(__rodata_end), mmu::Kind::KernelData },
        { addr(__stack_guard_0), kPage, mmu::Kind::Guard },
        { addr(__stack_guard_1), kPage, mmu::Kind::Guard },
        { addr(__stack_guard_2), kPage, mmu::Kind::Guard },
    };
    mmu::enable_early(regions, sizeof regions / sizeof regions[0]);
    // Static constructors run only now that normal memory is cacheable and unaligned-safe.
    for (auto* ctor = __init_array_start; ctor != __init_array_end; ++ctor)
        (*ctor)();
    kernel_main(dtb, dtb_from_firmware);
    for (;;)
        asm volatile("wfi");
}

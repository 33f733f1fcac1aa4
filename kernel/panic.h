#pragma once
// The panic path: reason, backtrace by frame pointers, then power off (exit status 3 under
// semihosting) or halt when the `panic=halt` boot argument asks for it (for a debugger).
#include <cstdint>

namespace kpanic {

void set_halt_on_panic(bool halt);
// Marks the kernel as panicking. Called again while a panic is being reported (a fault in the
// report itself), it prints one line naming `what` and powers off at once: reporting again
// would fault again, down the stack.
void enter(const char* what);
void print_backtrace(uint64_t fp, uint64_t first_pc);
[[noreturn]] void finish();

} // namespace kpanic

[[noreturn]] __attribute__((format(printf, 1, 2))) void panic(const char* fmt, ...);

// Before the console exists: report through the board's emergency UART, then stop.
[[noreturn]] void panic_without_console(const char* reason);

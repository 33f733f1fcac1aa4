#pragma once
// Deliberate faults for testing the exception path (boot argument `fault=` or shell `fault`).
#include <string_view>

namespace fault_injection {

// kinds: "data" (load from an unmapped address), "write" (store to read-only kernel text),
// "exec" (jump into non-executable data), "undef" (undefined instruction), "brk" (BRK #0x42),
// "nested" (a data fault whose register dump faults in turn), "boot_stack" and
// "exception_stack" (unbounded recursion on that kernel stack, into its guard page)
void trigger(std::string_view kind);

// Called by the fault report after its first line: faults there once "nested" was triggered.
void report_hook();

} // namespace fault_injection

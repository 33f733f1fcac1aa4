#pragma once
// Deliberate faults for testing the exception path (boot argument `fault=` or shell `fault`).
#include <string_view>

namespace fault_injection {

// kinds: "data" (load from an unmapped address), "write" (store to read-only kernel text),
// "exec" (jump into non-executable data), "undef" (undefined instruction), "brk" (BRK #0x42),
// "nested" (a data fault whose register dump faults in turn), "boot_stack" and
// "exception_stack" (unbounded recursion on that kernel stack, into its guard page),
// "lwip_assert" (arms the assertion below)
void trigger(std::string_view kind);

// Called by the fault report after its first line: faults there once "nested" was triggered.
void report_hook();
// "lwip_assert": the TCP echo service then fails an lwIP assertion (LWIP_ASSERT, the real
// handler) for data that starts with LWIP-ASSERT, to prove the connection alone is dropped.
bool lwip_assert_armed();

} // namespace fault_injection

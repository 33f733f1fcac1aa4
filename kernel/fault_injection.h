#pragma once
// Deliberate faults for testing the exception path (boot argument `fault=` or shell `fault`).
#include <string_view>

namespace fault_injection {

// kinds: "data" (load from an unmapped address), "write" (store to read-only kernel text),
// "exec" (jump into non-executable data), "undef" (undefined instruction), "brk" (BRK #0x42)
void trigger(std::string_view kind);

} // namespace fault_injection

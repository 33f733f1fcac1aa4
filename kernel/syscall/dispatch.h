#pragma once
// System call entry from the SVC vector: decode, check the capability named in a0 against the
// table entry, then invoke the handler with nothing left to check.
#include "../arch/aarch64/trap_frame.h"

namespace syscall {

void dispatch(arch::TrapFrame& frame);
const char* name(uint64_t number);
void print_table(); // the documentation, generated from syscalls.def
uint64_t count(uint64_t number);

} // namespace syscall

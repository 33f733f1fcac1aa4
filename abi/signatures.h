#pragma once
// Each call's argument list as a function type, abi::signature::<name> = int64_t(arguments...):
// what the task-side stubs (abi/sys.h) and the kernel's decode (kernel/syscall/decode.h) are
// generated from.
#include "types.h"

namespace abi::signature {

#define SYSCALL(nr, name, type, rights, args, doc) using name = int64_t args;
#include "syscalls.def"
#undef SYSCALL

} // namespace abi::signature

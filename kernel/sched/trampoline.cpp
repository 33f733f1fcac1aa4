// First code of every task (entered by exception return at EL1t): run the task function,
// then leave through the exit system call with its result.
#include "../syscall/sys.h"
#include "scheduler.h"

extern "C" [[noreturn]] void task_trampoline(sched::TaskFn fn, void* arg) { sys::exit(fn(arg)); }

#pragma once
// Task-side system call stubs: `svc #0` with the number in x8 and arguments in x0..x5.
#include <cstdint>

#include <ktl/result.h>

namespace sys {

enum class Number : uint64_t {
#define SYSCALL(nr, name, type, rights, doc) name = nr,
#include "syscalls.def"
#undef SYSCALL
};

inline int64_t call(Number nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                    uint64_t a5 = 0) {
    register uint64_t x8 asm("x8") = static_cast<uint64_t>(nr);
    register uint64_t x0 asm("x0") = a0;
    register uint64_t x1 asm("x1") = a1;
    register uint64_t x2 asm("x2") = a2;
    register uint64_t x3 asm("x3") = a3;
    register uint64_t x4 asm("x4") = a4;
    register uint64_t x5 asm("x5") = a5;
    asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
    return static_cast<int64_t>(x0);
}

inline void yield() { call(Number::yield); }
[[noreturn]] inline void exit(int64_t code) {
    call(Number::exit, static_cast<uint64_t>(code));
    __builtin_unreachable();
}
inline int64_t sleep_ns(uint64_t ns) { return call(Number::sleep, ns); }
inline uint64_t clock_ns() { return static_cast<uint64_t>(call(Number::clock)); }
inline int64_t self() { return call(Number::task_self); }
// Whether the calling task has used up its system-call budget (task_limit). Reads the task's own
// state without a system call, so it answers after the budget is gone.
bool budget_spent();

} // namespace sys

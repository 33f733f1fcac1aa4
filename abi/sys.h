#pragma once
// Task-side system calls: `svc #0` with the number in x8 and the arguments in x0..x5. Every call of
// abi/syscalls.def has a typed stub here, generated from its argument list: sys::vec_search(cap,
// query, k, ef, hits, filter) returns what the kernel answers (>= 0, or -ktl::Error).
#include <cstdint>
#include <type_traits>

#include <ktl/result.h>

#include "signatures.h"
#include "types.h"

namespace sys {

enum class Number : uint64_t {
#define SYSCALL(nr, name, type, rights, args, doc) name = nr,
#include "syscalls.def"
#undef SYSCALL
};

// The raw trap. Prefer the typed stubs below; this stays for callers not converted yet.
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

namespace detail {

// An argument as its register carries it: the one place where typed arguments become raw bits.
// Signed values are sign-extended (the kernel reads them back as int64_t).
template <typename T>
inline uint64_t to_register(T value) {
    if constexpr (std::is_pointer_v<T>)
        return reinterpret_cast<uint64_t>(value);
    else if constexpr (std::is_same_v<T, bool>)
        return value ? 1 : 0;
    else
        return static_cast<uint64_t>(value);
}

// The stub of one call: its parameters are the call's argument list, so arguments convert to the
// declared types at the call site and a wrong one does not compile.
template <Number N, typename Signature>
struct Stub;

template <Number N, typename... Args>
struct Stub<N, int64_t(Args...)> {
    static_assert(sizeof...(Args) <= 6, "at most six arguments, in x0..x5");
    int64_t operator()(Args... args) const { return call(N, to_register(args)...); }
};

// exit does not come back.
template <>
struct Stub<Number::exit, int64_t(int64_t)> {
    [[noreturn]] void operator()(int64_t code) const {
        call(Number::exit, static_cast<uint64_t>(code));
        __builtin_unreachable();
    }
};

} // namespace detail

// One constant object per call: sys::name(arguments...).
#define SYSCALL(nr, name, type, rights, args, doc) \
    inline constexpr detail::Stub<Number::name, abi::signature::name> name {};
#include "syscalls.def"
#undef SYSCALL

// Shorthands.
inline int64_t sleep_ns(uint64_t ns) { return sleep(ns); }
inline uint64_t clock_ns() { return static_cast<uint64_t>(clock()); }
inline int64_t self() { return task_self(); }
// Whether the calling task has used up its system-call budget (task_limit). Reads the task's own
// state without a system call, so it answers after the budget is gone.
bool budget_spent();

} // namespace sys

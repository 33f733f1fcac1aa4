#pragma once
// The argument decode generated from abi/syscalls.def: each call's registers x0..x5 become the
// typed arguments its list declares, and its handler is declared with exactly those parameters
// (after the capability object the dispatcher already checked). This is the one place where a
// register becomes a pointer; the handlers check what the pointers reach (buffers.h).
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <abi/signatures.h>

#include "../arch/aarch64/trap_frame.h"
#include "../cap/kcap.h"

namespace decode {

template <typename T>
inline T from_register(uint64_t value) {
    if constexpr (std::is_pointer_v<T>)
        return reinterpret_cast<T>(value);
    else
        return static_cast<T>(value);
}

// A handler's type: the checked capability object, then the call's arguments.
template <typename Signature>
struct HandlerOf;

template <typename... Args>
struct HandlerOf<int64_t(Args...)> {
    using type = int64_t(const kcap::Resolved& object, Args... args);
};

template <typename Signature>
using Handler = typename HandlerOf<Signature>::type;

// Fetches the arguments from the frame and calls the handler.
template <typename Signature, Handler<Signature>* Fn>
struct Invoke;

template <typename... Args, Handler<int64_t(Args...)>* Fn>
struct Invoke<int64_t(Args...), Fn> {
    static int64_t run(arch::TrapFrame& frame, const kcap::Resolved& object) {
        return at(frame, object, std::index_sequence_for<Args...> {});
    }

private:
    template <size_t... I>
    static int64_t at(arch::TrapFrame& frame, const kcap::Resolved& object, std::index_sequence<I...>) {
        return Fn(object, from_register<Args>(frame.x[I])...);
    }
};

} // namespace decode

#pragma once
// Saved state on exception entry; layout shared with boot/vectors.S.
#include <cstddef>
#include <cstdint>

namespace arch {

struct TrapFrame {
    uint64_t x[31]; // x0..x30
    uint64_t sp_el0;
    uint64_t elr;
    uint64_t spsr;
    uint64_t esr;
    uint64_t far;
    __uint128_t q[32];
    uint64_t fpsr;
    uint64_t fpcr;
    uint64_t pad[2];
};
static_assert(offsetof(TrapFrame, elr) == 256);
static_assert(offsetof(TrapFrame, esr) == 272);
static_assert(offsetof(TrapFrame, q) == 288);
static_assert(offsetof(TrapFrame, fpsr) == 800);
static_assert(sizeof(TrapFrame) == 832);

// Which of the 16 vector table entries was taken (ARM DDI 0487 D1.10.2).
enum class ExceptionKind : uint64_t {
    CurSp0Sync = 0,
    CurSp0Irq,
    CurSp0Fiq,
    CurSp0SError,
    CurSpxSync,
    CurSpxIrq,
    CurSpxFiq,
    CurSpxSError,
    Lower64Sync,
    Lower64Irq,
    Lower64Fiq,
    Lower64SError,
    Lower32Sync,
    Lower32Irq,
    Lower32Fiq,
    Lower32SError,
};

const char* exception_kind_name(ExceptionKind kind);

} // namespace arch

#include "fault_injection.h"

#include "log.h"

#include <cstdint>

extern "C" char __kernel_start[];

namespace fault_injection {
namespace {
// A data word to "execute": lives in RW+XN memory, so fetching it must fault.
uint32_t g_not_code[4] = { 0xd503201f, 0xd503201f, 0xd65f03c0, 0 };
} // namespace

void trigger(std::string_view kind) {
    KLOG_WARN("fault injection: %.*s", static_cast<int>(kind.size()), kind.data());
    if (kind == "data") {
        // 0x1000 lies in the unmapped null guard.
        volatile uint64_t* p = reinterpret_cast<volatile uint64_t*>(0x1000);
        (void)*p;
    } else if (kind == "write") {
        volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(__kernel_start);
        *p = 0;
    } else if (kind == "exec") {
        auto fn = reinterpret_cast<void (*)()>(reinterpret_cast<uintptr_t>(g_not_code));
        fn();
    } else if (kind == "undef") {
        asm volatile(".inst 0x00000000"); // permanently undefined (UDF #0)
    } else if (kind == "brk") {
        asm volatile("brk #0x42");
    } else {
        KLOG_ERROR("fault injection: unknown kind (data|write|exec|undef|brk)");
        return;
    }
    KLOG_ERROR("fault injection: the fault did not happen");
}

} // namespace fault_injection

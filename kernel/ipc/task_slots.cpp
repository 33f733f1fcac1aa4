#include "task_slots.h"

#include "../arch/aarch64/cpu.h"
#include "../syscall/sys.h"

namespace ipc {

bool TaskSlots::attach(uint32_t slot) {
    arch::IrqGuard guard; // two tasks attach at start-up
    for (auto& h : m_holders)
        if (h.task == kNone) {
            h = { static_cast<uint32_t>(sys::self()), slot };
            return slot != kNone;
        }
    return false;
}

uint32_t TaskSlots::slot() const {
    uint32_t self = static_cast<uint32_t>(sys::self());
    for (const auto& h : m_holders)
        if (h.task == self)
            return h.slot;
    return kNone;
}

} // namespace ipc

#pragma once
// A kernel object several bridge tasks share (the audit trail's region, the provenance ring)
// is reached by each through a slot of its own capability table: which slot that is, per task.
#include <cstdint>

namespace ipc {

class TaskSlots {
public:
    static constexpr uint32_t kNone = ~0u;
    // The calling task reaches the object through `slot` (kNone: it was not granted it). False
    // when the slot is kNone or no entry is left.
    bool attach(uint32_t slot);
    // The calling task's slot, kNone when it attached none.
    uint32_t slot() const;

private:
    struct Holder {
        uint32_t task = kNone;
        uint32_t slot = kNone;
    };
    Holder m_holders[4]; // the serial bridge, the HTTP bridge, the cluster task, a spare
};

} // namespace ipc

#include "irq.h"

#include <drivers/irq_controller.h>

namespace irq {
namespace {

constexpr uint32_t kMaxIntids = 1020;

struct Slot {
    Handler handler = nullptr;
    void* context = nullptr;
    uint64_t count = 0;
};

IrqController* g_controller = nullptr;
Slot g_slots[kMaxIntids];
uint64_t g_spurious = 0;

} // namespace

void set_controller(IrqController* c) { g_controller = c; }
IrqController* controller() { return g_controller; }

ktl::Result<void> attach(uint32_t intid, Handler handler, void* context, bool edge_triggered) {
    if (!g_controller || !handler || intid >= kMaxIntids || intid > g_controller->max_intid())
        return ktl::Error::InvalidArgs;
    if (g_slots[intid].handler)
        return ktl::Error::Exists;
    g_slots[intid].handler = handler;
    g_slots[intid].context = context;
    g_controller->enable(intid, edge_triggered);
    return {};
}

void detach(uint32_t intid) {
    if (!g_controller || intid >= kMaxIntids)
        return;
    g_controller->disable(intid);
    g_slots[intid].handler = nullptr;
    g_slots[intid].context = nullptr;
}

void dispatch() {
    if (!g_controller)
        return;
    // Bounded: drain what is pending now, but never loop forever on a stuck line.
    for (int i = 0; i < 16; ++i) {
        uint32_t intid = g_controller->acknowledge();
        if (intid >= kMaxIntids) {
            if (i == 0)
                ++g_spurious;
            return;
        }
        Slot& slot = g_slots[intid];
        ++slot.count;
        if (slot.handler)
            slot.handler(slot.context);
        else
            g_controller->disable(intid); // nobody claimed it: stop it from firing again
        g_controller->end_of_interrupt(intid);
    }
}

uint64_t count(uint32_t intid) { return intid < kMaxIntids ? g_slots[intid].count : 0; }
uint64_t spurious_count() { return g_spurious; }

} // namespace irq

#pragma once
// The kernel's interrupt layer: one handler per INTID, dispatched from the IRQ vector through
// whichever IrqController the device tree selected.
#include <cstdint>

#include <ktl/result.h>

class IrqController;

namespace irq {

using Handler = void (*)(void* context);

void set_controller(IrqController* controller);
IrqController* controller();
ktl::Result<void> attach(uint32_t intid, Handler handler, void* context, bool edge_triggered);
void detach(uint32_t intid);
void dispatch(); // called with IRQs masked from the exception vector
uint64_t count(uint32_t intid);
uint64_t spurious_count();

} // namespace irq

#pragma once
// The RNG200 driver's bus in the kernel.
#include "../mmio_window.h"
#include "rng200.h"

namespace rng200 {
using MmioBus = MmioWindow<Bus>;
} // namespace rng200

#pragma once
// Selects the board file this image is built for (CMake defines BASALT_BOARD_*).
#if defined(BASALT_BOARD_QEMU_VIRT)
#include "qemu_virt.h"
#else
#error "no board selected: configure with -DBASALT_BOARD=qemu_virt"
#endif

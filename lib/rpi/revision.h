#pragma once
// Raspberry Pi board revision codes as the firmware reports them (mailbox tag 0x00010002): the
// "new-style" code packs the model, memory size, processor and board revision into bit fields
// (Raspberry Pi documentation, "Revision codes"). Hardware-free, host-tested.
#include <cstddef>
#include <cstdint>

namespace rpi {

struct Revision {
    bool new_style = false;
    uint32_t type = 0;        // bits 4..11
    uint32_t processor = 0;   // bits 12..15: 3 = BCM2711, 4 = BCM2712
    uint32_t memory_mib = 0;  // 256 << bits 20..22
    uint32_t board_minor = 0; // bits 0..3: "rev 1.N"
};

Revision decode(uint32_t code);
// "4 Model B", "400", "Compute Module 4", "5 Model B", ...; "unknown" for codes not listed.
const char* model_name(uint32_t type);
// "Raspberry Pi 4 Model B rev 1.5, 2 GiB" into out (NUL-terminated); returns the length.
size_t describe(uint32_t code, char* out, size_t cap);

} // namespace rpi

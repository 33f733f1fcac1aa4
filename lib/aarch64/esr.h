#pragma once
// Decoding of ESR_ELx (ARM DDI 0487 D17.2.37) for fault reports. Pure functions: no hardware
// access, so the host tests check them against known syndrome values.
#include <cstddef>
#include <cstdint>

namespace aarch64 {

struct EsrInfo {
    uint32_t ec = 0;  // exception class, ESR[31:26]
    uint32_t iss = 0; // instruction-specific syndrome, ESR[24:0]
    bool il = false;  // 32-bit instruction length
    const char* class_name = "";
    bool is_abort = false;  // instruction or data abort: fault status below is meaningful
    const char* fault = ""; // decoded DFSC/IFSC, e.g. "translation fault"
    int fault_level = -1;   // translation table level for level-based faults, else -1
    bool write = false;     // data abort caused by a write (WnR)
    bool far_valid = true;  // FAR holds the faulting address (FnV clear)
};

EsrInfo decode_esr(uint64_t esr);

// One line: "EC 0x25 data abort (same EL): translation fault, level 1, write (ISS 0x000045)".
// Returns the number of characters written (excluding NUL); always NUL-terminates when cap > 0.
size_t format_esr(uint64_t esr, char* out, size_t cap);

} // namespace aarch64

#pragma once
// Frame-pointer backtraces (AAPCS64 frame records: [fp] = caller's fp, [fp+8] = return address).
#include <cstddef>
#include <cstdint>

namespace arch {

// Fills pcs with return addresses starting from the frame record at fp. Stops at a null,
// misaligned, non-RAM or non-increasing frame pointer, or after max frames.
size_t backtrace_from(uint64_t fp, uint64_t* pcs, size_t max);

} // namespace arch

#pragma once
// Register access for drivers. Only files under drivers/ include this: every MMIO access in
// the kernel goes through a driver class.
#include <cstdint>

namespace mmio {

inline uint32_t read32(uintptr_t addr) { return *reinterpret_cast<volatile uint32_t*>(addr); }
inline void write32(uintptr_t addr, uint32_t v) { *reinterpret_cast<volatile uint32_t*>(addr) = v; }
inline uint64_t read64(uintptr_t addr) { return *reinterpret_cast<volatile uint64_t*>(addr); }
inline void write64(uintptr_t addr, uint64_t v) { *reinterpret_cast<volatile uint64_t*>(addr) = v; }
inline uint8_t read8(uintptr_t addr) { return *reinterpret_cast<volatile uint8_t*>(addr); }
inline void write8(uintptr_t addr, uint8_t v) { *reinterpret_cast<volatile uint8_t*>(addr) = v; }

} // namespace mmio

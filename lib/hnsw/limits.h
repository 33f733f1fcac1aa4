#pragma once
// Every bound of the HNSW index in one place. Parameters outside these ranges are rejected
// with ktl::Error::InvalidArgs by Params::validate(); snapshots are checked against them too.
#include <cstdint>

namespace hnsw {

inline constexpr uint32_t kMaxDim = 4096;
inline constexpr uint32_t kMinM = 2;
inline constexpr uint32_t kMaxM = 64;     // level-0 lists hold 2*M links
inline constexpr uint32_t kMaxEf = 4096;  // ef_construction and per-query ef
inline constexpr uint32_t kMaxLevel = 15; // levels 0..kMaxLevel
inline constexpr uint32_t kMaxElements = 1u << 28;
inline constexpr uint32_t kLanes = 32;         // distance reduction: 32 fixed lanes
inline constexpr uint32_t kNone = 0xffffffffu; // "no slot" / "no block"

} // namespace hnsw

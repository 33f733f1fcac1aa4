#pragma once
// Per-principal limit overrides (issue "MCP on the serial line": "per-principal overrides may only
// tighten the defaults"). A principal carries its own wall time, output bytes, tool heap, rate
// bucket and in-flight cap; 0 means "the bridge's default". Every effective value is the smaller of the two,
// so an override can never loosen what the appliance's configuration allows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ktl/result.h>

#include "call_limiter.h"

namespace mcp {

struct PrincipalLimits {
    uint32_t time_ms = 0;      // tool wall-time limit
    uint32_t output_bytes = 0; // tool output limit
    uint32_t memory_bytes = 0; // the tool task's kernel heap
    uint32_t syscalls = 0;     // the tool task's system calls
    uint32_t burst = 0;        // rate bucket capacity (with per_second: `rate=B/S`)
    uint32_t per_second = 0;   // rate bucket refill
    uint32_t concurrency = 0;  // calls in flight
    // Scopes (contracts: "may only be tightened per principal"): the principal keeps only those
    // of its role's scopes named here. has_scopes false: the role's set unchanged.
    bool has_scopes = false;
    uint32_t scopes = 0;

    bool any() const {
        return time_ms || output_bytes || memory_bytes || syscalls || burst || per_second || concurrency || has_scopes;
    }
};

// Parses "time_ms=N,output_bytes=N,memory_bytes=N,syscalls=N,rate=B/S,concurrency=N,
// scopes=kernel:read+vector:read" (scopes=none for no scope at all) (any subset, any order; each value a
// positive decimal of at most 9 digits). InvalidArgs names nothing: the caller reports the spec.
ktl::Result<void> parse_limits(std::string_view list, PrincipalLimits& out);

// Splits "PRINCIPAL:LIST" (the `limit=` boot argument) and parses the list.
ktl::Result<void> parse_limit_spec(std::string_view spec, std::string_view& principal, PrincipalLimits& out);

// The smaller of each pair (0 in the override keeps the base).
LimitConfig tightened(const LimitConfig& base, const PrincipalLimits& own);
uint64_t tightened_wall_ns(uint64_t base_ns, const PrincipalLimits& own);
size_t tightened_output(size_t base, const PrincipalLimits& own);
uint64_t tightened_memory(uint64_t base, const PrincipalLimits& own);
uint64_t tightened_syscalls(uint64_t base, const PrincipalLimits& own);

// Whether some value of `own` asks for more than `base` allows (and so is ignored): reported at
// boot so a mistaken override is visible.
struct CallLimits {
    uint64_t wall_ns;
    size_t output;
    uint64_t memory;
    uint64_t syscalls;
};
bool loosens(const PrincipalLimits& own, const LimitConfig& base, const CallLimits& call);

} // namespace mcp

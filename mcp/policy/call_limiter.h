#pragma once
// Per-principal call limits checked before any tool runs (docs/security.md, pipeline step 7): a token
// bucket for rate and an in-flight counter for concurrency (default 10). Time is passed in, so
// the kernel feeds its monotonic clock and the tests a simulated one. One limiter serves every
// line (serial, HTTP), so a caller's bucket and in-flight count are the same wherever it calls
// from; the host supplies the lock that makes that safe (LimiterLock).
#include <cstddef>
#include <cstdint>

#include "error_code.h"
#include "roles.h"

namespace mcp {
struct PrincipalLimits;
}

namespace mcp {

struct RoleRate {
    uint32_t burst;
    uint32_t per_second;
};

// Each role's bucket by default: the console (admin) and other admins load thousands of vectors
// or run hundreds of searches back to back; anonymous callers get little. All finite.
constexpr RoleRate kRoleRates[] = {
    { 50, 20 },    // anonymous
    { 200, 100 },  // reader
    { 500, 200 },  // operator
    { 1000, 500 }, // admin
};
constexpr RoleRate role_rate(Role role) { return kRoleRates[static_cast<uint8_t>(role) & 3]; }

struct LimitConfig {
    uint32_t burst = 20;      // bucket capacity (calls)
    uint32_t per_second = 10; // refill rate (calls per second)
    uint32_t max_in_flight = 10;
    // Each principal's bucket is its role's (kRoleRates) rather than burst/per_second, which then
    // only bound it from above. Off: one bucket size for every role (the `rate=` boot argument).
    bool by_role = false;
};

// The limits a principal of this role gets before its own overrides: with by_role its role's
// bucket (never above burst/per_second), otherwise config unchanged.
LimitConfig for_role(const LimitConfig& config, Role role);

// Brackets every access to the limiter's state (the kernel masks interrupts: the bridges run
// on one core). Unset: no locking (one user, as in the host tests).
struct LimiterLock {
    void (*enter)() = nullptr;
    void (*leave)() = nullptr;
};

struct LimitDecision {
    bool allowed = false;
    ErrorCode code = ErrorCode::LimitRateExceeded; // when refused
    uint32_t retry_after_ms = 0;                   // for Retry-After
};

class CallLimiter {
public:
    static constexpr size_t kMaxPrincipals = 64; // index 0 = anonymous

    explicit CallLimiter(LimitConfig config = {}, LimiterLock lock = {}) : m_config(config), m_lock(lock) {}
    // Takes one token and one in-flight slot, or neither. `own`: the principal's overrides (the
    // smaller of each value and the configured one applies); `role`: whose bucket, when by_role.
    LimitDecision acquire(uint16_t principal, uint64_t now_ns, const PrincipalLimits* own = nullptr,
                          Role role = Role::Anonymous);
    void release(uint16_t principal);
    uint32_t in_flight(uint16_t principal) const;
    const LimitConfig& config() const { return m_config; }

private:
    struct State {
        uint64_t milli_tokens = 0; // tokens x 1000, so slow refills don't round to zero
        uint64_t last_ns = 0;
        uint32_t in_flight = 0;
        bool started = false;
    };
    static void refill(State& s, const LimitConfig& config, uint64_t now_ns);
    class Locked;

    LimitConfig m_config;
    LimiterLock m_lock;
    State m_states[kMaxPrincipals];
};

} // namespace mcp

#include "call_limiter.h"
#include "principal_limits.h"

namespace mcp {

class CallLimiter::Locked {
public:
    explicit Locked(const LimiterLock& lock) : m_lock(lock) {
        if (m_lock.enter)
            m_lock.enter();
    }
    ~Locked() {
        if (m_lock.leave)
            m_lock.leave();
    }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

private:
    const LimiterLock& m_lock;
};

void CallLimiter::refill(State& s, const LimitConfig& config, uint64_t now_ns) {
    uint64_t cap = uint64_t(config.burst) * 1000;
    if (!s.started) {
        s.started = true;
        s.milli_tokens = cap;
        s.last_ns = now_ns;
        return;
    }
    if (now_ns <= s.last_ns)
        return; // time never runs backwards here
    uint64_t elapsed_us = (now_ns - s.last_ns) / 1000;
    uint64_t add = elapsed_us * config.per_second / 1000; // milli-tokens
    if (add == 0)
        return;
    s.milli_tokens = s.milli_tokens + add > cap ? cap : s.milli_tokens + add;
    s.last_ns = now_ns;
}

LimitConfig for_role(const LimitConfig& config, Role role) {
    LimitConfig c = config;
    if (c.by_role) {
        RoleRate r = role_rate(role);
        c.burst = r.burst < c.burst ? r.burst : c.burst;
        c.per_second = r.per_second < c.per_second ? r.per_second : c.per_second;
    }
    return c;
}

LimitDecision CallLimiter::acquire(uint16_t principal, uint64_t now_ns, const PrincipalLimits* own, Role role) {
    LimitDecision d;
    if (principal >= kMaxPrincipals) {
        d.code = ErrorCode::InternalError;
        return d;
    }
    const LimitConfig base = for_role(m_config, role);
    const LimitConfig config = own ? tightened(base, *own) : base;
    Locked locked(m_lock);
    State& s = m_states[principal];
    refill(s, config, now_ns);
    if (s.milli_tokens > uint64_t(config.burst) * 1000)
        s.milli_tokens = uint64_t(config.burst) * 1000; // a tighter bucket than the one it started full
    if (s.in_flight >= config.max_in_flight) {
        d.code = ErrorCode::LimitConcurrencyExceeded;
        d.retry_after_ms = 1000;
        return d;
    }
    if (s.milli_tokens < 1000) {
        d.code = ErrorCode::LimitRateExceeded;
        uint64_t missing = 1000 - s.milli_tokens;
        uint64_t ms = config.per_second ? (missing + config.per_second - 1) / config.per_second : 60000;
        d.retry_after_ms = static_cast<uint32_t>(ms ? ms : 1);
        return d;
    }
    s.milli_tokens -= 1000;
    ++s.in_flight;
    d.allowed = true;
    return d;
}

void CallLimiter::release(uint16_t principal) {
    Locked locked(m_lock);
    if (principal < kMaxPrincipals && m_states[principal].in_flight > 0)
        --m_states[principal].in_flight;
}

uint32_t CallLimiter::in_flight(uint16_t principal) const {
    Locked locked(m_lock);
    return principal < kMaxPrincipals ? m_states[principal].in_flight : 0;
}

} // namespace mcp

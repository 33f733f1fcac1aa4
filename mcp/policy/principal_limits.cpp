#include "principal_limits.h"

#include "roles.h"

#include <ktl/decimal.h>

namespace mcp {
namespace {

constexpr size_t kMaxDigits = 9; // < 10^9: far past any sane limit, and time_ms * 10^6 fits

bool parse_positive(std::string_view text, uint32_t& out) {
    uint32_t v;
    if (text.size() > kMaxDigits || !ktl::parse_decimal(text, v) || v == 0)
        return false;
    out = v;
    return true;
}

template <typename T>
T smaller(T base, uint32_t own) {
    return own != 0 && own < base ? static_cast<T>(own) : base;
}

// "a+b+c" scope names, or "none".
bool parse_scopes(std::string_view text, uint32_t& out) {
    if (text == "none") {
        out = 0;
        return true;
    }
    uint32_t mask = 0;
    for (bool more = true; more;) {
        size_t plus = text.find('+');
        auto scope = parse_scope(text.substr(0, plus));
        if (!scope)
            return false;
        mask |= *scope;
        more = plus != std::string_view::npos;
        text = more ? text.substr(plus + 1) : std::string_view();
    }
    out = mask;
    return true;
}

} // namespace

ktl::Result<void> parse_limits(std::string_view list, PrincipalLimits& out) {
    PrincipalLimits parsed;
    if (list.empty())
        return ktl::Error::InvalidArgs;
    // Bounded: each round consumes one item and its comma; an empty item (",," or a trailing
    // comma) is malformed.
    for (bool more = true; more;) {
        size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        more = comma != std::string_view::npos;
        list = more ? list.substr(comma + 1) : std::string_view();
        size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            return ktl::Error::InvalidArgs;
        std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        bool ok;
        if (key == "time_ms") {
            ok = parse_positive(value, parsed.time_ms);
        } else if (key == "output_bytes") {
            ok = parse_positive(value, parsed.output_bytes);
        } else if (key == "memory_bytes") {
            ok = parse_positive(value, parsed.memory_bytes);
        } else if (key == "syscalls") {
            ok = parse_positive(value, parsed.syscalls);
        } else if (key == "scopes") {
            ok = parse_scopes(value, parsed.scopes);
            parsed.has_scopes = true;
        } else if (key == "concurrency") {
            ok = parse_positive(value, parsed.concurrency);
        } else if (key == "rate") {
            size_t slash = value.find('/');
            ok = slash != std::string_view::npos && parse_positive(value.substr(0, slash), parsed.burst) &&
                 parse_positive(value.substr(slash + 1), parsed.per_second);
        } else {
            ok = false;
        }
        if (!ok)
            return ktl::Error::InvalidArgs;
    }
    out = parsed;
    return {};
}

ktl::Result<void> parse_limit_spec(std::string_view spec, std::string_view& principal, PrincipalLimits& out) {
    size_t colon = spec.find(':');
    if (colon == 0 || colon == std::string_view::npos)
        return ktl::Error::InvalidArgs;
    TRY_VOID(parse_limits(spec.substr(colon + 1), out));
    principal = spec.substr(0, colon);
    return {};
}

LimitConfig tightened(const LimitConfig& base, const PrincipalLimits& own) {
    return { smaller(base.burst, own.burst), smaller(base.per_second, own.per_second),
             smaller(base.max_in_flight, own.concurrency) };
}

uint64_t tightened_wall_ns(uint64_t base_ns, const PrincipalLimits& own) {
    uint64_t own_ns = uint64_t(own.time_ms) * 1000000;
    return own.time_ms != 0 && own_ns < base_ns ? own_ns : base_ns;
}

size_t tightened_output(size_t base, const PrincipalLimits& own) { return smaller(base, own.output_bytes); }

uint64_t tightened_memory(uint64_t base, const PrincipalLimits& own) { return smaller(base, own.memory_bytes); }

uint64_t tightened_syscalls(uint64_t base, const PrincipalLimits& own) { return smaller(base, own.syscalls); }

bool loosens(const PrincipalLimits& own, const LimitConfig& base, const CallLimits& call) {
    return (own.time_ms && uint64_t(own.time_ms) * 1000000 > call.wall_ns) ||
           (own.output_bytes && own.output_bytes > call.output) ||
           (own.memory_bytes && own.memory_bytes > call.memory) || (own.syscalls && own.syscalls > call.syscalls) ||
           (own.burst && own.burst > base.burst) || (own.per_second && own.per_second > base.per_second) ||
           (own.concurrency && own.concurrency > base.max_in_flight);
}

} // namespace mcp

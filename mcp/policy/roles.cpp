#include "roles.h"

#include <ktl/format.h>

namespace mcp {
namespace {
struct ScopeName {
    Scope scope;
    const char* name;
};
constexpr ScopeName kScopes[] = {
    { kKernelRead, "kernel:read" },
    { kKernelAdmin, "kernel:admin" },
    { kAuditRead, "audit:read" },
    { kVectorRead, "vector:read" },
    { kVectorWrite, "vector:write" },
    { kVectorAdmin, "vector:admin" },
    { kConformanceFixtures, "conformance:fixtures" },
    { kProposalApprove, "proposal:approve" },
};
} // namespace

const char* role_name(Role role) {
    switch (role) {
    case Role::Admin: return "admin";
    case Role::Operator: return "operator";
    case Role::Reader: return "reader";
    case Role::Anonymous: return "anonymous";
    }
    return "anonymous";
}

std::optional<Role> parse_role(std::string_view name) {
    for (Role r : { Role::Admin, Role::Operator, Role::Reader, Role::Anonymous }) {
        if (name == role_name(r))
            return r;
    }
    return std::nullopt;
}

const char* scope_name(Scope scope) {
    for (const auto& s : kScopes) {
        if (s.scope == scope)
            return s.name;
    }
    return "?";
}

std::optional<Scope> parse_scope(std::string_view name) {
    for (const auto& s : kScopes) {
        if (name == s.name)
            return s.scope;
    }
    return std::nullopt;
}

size_t format_scopes(uint32_t mask, char* out, size_t cap) {
    ktl::Formatter f(out, cap);
    bool first = true;
    for (const auto& s : kScopes) {
        if (mask & s.scope) {
            f.append("%s%s", first ? "" : " ", s.name);
            first = false;
        }
    }
    return f.length();
}

} // namespace mcp

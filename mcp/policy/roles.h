#pragma once
// Roles and scopes (docs/security.md, "Roles and scopes"). A role maps to a scope set; a
// principal may be tightened below its role's set, never widened.
#include <cstdint>
#include <optional>
#include <string_view>

namespace mcp {

enum class Role : uint8_t { Anonymous = 0, Reader = 1, Operator = 2, Admin = 3 };

enum Scope : uint32_t {
    kKernelRead = 1u << 0,
    kKernelAdmin = 1u << 1,
    kAuditRead = 1u << 2,
    kVectorRead = 1u << 3,
    kVectorWrite = 1u << 4,
    kVectorAdmin = 1u << 5,
    // The conformance test profile's fixtures (boot argument profile=conformance): held by every
    // caller in that profile (ServerConfig::anonymous_scopes), by nobody but admin otherwise.
    kConformanceFixtures = 1u << 6,
    // Approving or rejecting a proposal (a destructive call the sink policy held back): admin only.
    kProposalApprove = 1u << 7,
    kAllScopes = (1u << 8) - 1,
};

constexpr uint32_t scopes_of(Role role) {
    switch (role) {
    case Role::Admin: return kAllScopes;
    case Role::Operator: return kKernelRead | kVectorRead | kVectorWrite;
    case Role::Reader: return kKernelRead | kVectorRead;
    case Role::Anonymous: return 0;
    }
    return 0;
}

const char* role_name(Role role);
std::optional<Role> parse_role(std::string_view name);
const char* scope_name(Scope scope); // "kernel:read", ...
std::optional<Scope> parse_scope(std::string_view name);
// Writes "kernel:read vector:read" style text for the scopes in `mask`; returns its length.
size_t format_scopes(uint32_t mask, char* out, size_t cap);

} // namespace mcp

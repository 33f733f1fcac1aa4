#pragma once
// API keys -> principals. Keys are kept only as SHA-256 digests; a presented key is hashed and
// compared against every entry without an early exit, so neither the match position nor a
// prefix leaks through timing. Secrets are never stored or logged.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <crypto/sha256.h>
#include <ktl/result.h>

#include "principal_limits.h"
#include "roles.h"

namespace mcp {

struct Principal {
    static constexpr size_t kNameMax = 31;
    uint16_t id = 0; // 1-based; 0 = anonymous
    char name[kNameMax + 1] = "anonymous";
    Role role = Role::Anonymous;
    uint32_t scopes = 0;    // scopes_of(role), possibly tightened
    PrincipalLimits limits; // per-principal overrides (only ever tighten the bridge's defaults)
};

class KeyStore {
public:
    static constexpr size_t kMaxKeys = 32;
    static constexpr size_t kMinSecret = 16;
    static constexpr size_t kMaxSecret = 256;

    // InvalidArgs: empty/oversized principal name, secret shorter than kMinSecret or longer than
    // kMaxSecret, scopes outside the role's; Exists: same secret or principal already present; Full.
    ktl::Result<uint16_t> add(std::string_view principal, Role role, std::string_view secret, uint32_t scopes);
    ktl::Result<uint16_t> add(std::string_view principal, Role role, std::string_view secret) {
        return add(principal, role, secret, scopes_of(role));
    }
    // Parses "ROLE:SECRET" or "ROLE:PRINCIPAL:SECRET" (the --key option); the principal defaults
    // to the role's name plus the entry number.
    ktl::Result<uint16_t> add_spec(std::string_view spec);
    // The same with the secret's SHA-256 in 64 hex digits instead of the secret ("ROLE:HEX" or
    // "ROLE:PRINCIPAL:HEX", boot argument key_sha256=): an SD card carries no secret.
    ktl::Result<uint16_t> add_spec_sha256(std::string_view spec);

    // NotFound when no key matches (auth_invalid_api_key); InvalidArgs for an empty key.
    // hashed: the key's SHA-256 when the caller has it already (a transport that checked it).
    ktl::Result<const Principal*> authenticate(std::string_view presented,
                                               const crypto::Digest* hashed = nullptr) const;
    const Principal* by_id(uint16_t id) const;
    // Installs limit overrides for the principal of that name and returns it (NotFound when no key
    // names it).
    ktl::Result<const Principal*> set_limits(std::string_view principal, const PrincipalLimits& limits);
    size_t size() const { return m_count; }

private:
    ktl::Result<uint16_t> add_digest(std::string_view principal, Role role, const crypto::Digest& digest,
                                     uint32_t scopes);
    // Splits "ROLE:[PRINCIPAL:]VALUE"; a missing principal is named after the role and entry.
    struct Spec {
        Role role;
        std::string_view principal;
        std::string_view value;
    };
    ktl::Result<Spec> split(std::string_view spec, char* generated, size_t cap) const;

    struct Entry {
        crypto::Digest digest;
        Principal principal;
    };
    Entry m_entries[kMaxKeys];
    size_t m_count = 0;
};

} // namespace mcp

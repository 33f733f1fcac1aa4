#include "key_store.h"

#include <ktl/format.h>

namespace mcp {

ktl::Result<uint16_t> KeyStore::add(std::string_view principal, Role role, std::string_view secret, uint32_t scopes) {
    if (secret.size() < kMinSecret || secret.size() > kMaxSecret)
        return ktl::Error::InvalidArgs;
    return add_digest(principal, role, crypto::Sha256::hash(secret), scopes);
}

ktl::Result<uint16_t> KeyStore::add_digest(std::string_view principal, Role role, const crypto::Digest& digest,
                                           uint32_t scopes) {
    if (principal.empty() || principal.size() > Principal::kNameMax || (scopes & ~scopes_of(role)) != 0)
        return ktl::Error::InvalidArgs;
    for (char c : principal) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                  c == '.';
        if (!ok)
            return ktl::Error::InvalidArgs;
    }
    if (m_count == kMaxKeys)
        return ktl::Error::Full;
    for (size_t i = 0; i < m_count; ++i) {
        if (crypto::equal_constant_time(m_entries[i].digest, digest) ||
            std::string_view(m_entries[i].principal.name) == principal)
            return ktl::Error::Exists;
    }
    Entry& e = m_entries[m_count];
    e.digest = digest;
    e.principal = Principal {};
    e.principal.id = static_cast<uint16_t>(m_count + 1);
    for (size_t i = 0; i < principal.size(); ++i)
        e.principal.name[i] = principal[i];
    e.principal.name[principal.size()] = '\0';
    e.principal.role = role;
    e.principal.scopes = scopes;
    ++m_count;
    return e.principal.id;
}

ktl::Result<KeyStore::Spec> KeyStore::split(std::string_view spec, char* generated, size_t cap) const {
    size_t first = spec.find(':');
    if (first == std::string_view::npos)
        return ktl::Error::InvalidArgs;
    auto role = parse_role(spec.substr(0, first));
    if (!role || *role == Role::Anonymous)
        return ktl::Error::InvalidArgs;
    std::string_view rest = spec.substr(first + 1);
    size_t second = rest.find(':');
    if (second != std::string_view::npos)
        return Spec { *role, rest.substr(0, second), rest.substr(second + 1) };
    ktl::Formatter f(generated, cap);
    f.append("%s-%zu", role_name(*role), m_count + 1);
    return Spec { *role, std::string_view(generated, f.length()), rest };
}

ktl::Result<uint16_t> KeyStore::add_spec(std::string_view spec) {
    char generated[Principal::kNameMax + 1];
    Spec s = TRY(split(spec, generated, sizeof generated));
    return add(s.principal, s.role, s.value);
}

ktl::Result<uint16_t> KeyStore::add_spec_sha256(std::string_view spec) {
    char generated[Principal::kNameMax + 1];
    Spec s = TRY(split(spec, generated, sizeof generated));
    if (s.value.size() != 64)
        return ktl::Error::InvalidArgs;
    crypto::Digest digest {};
    for (size_t i = 0; i < 64; ++i) {
        char c = s.value[i];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0)
            return ktl::Error::InvalidArgs;
        digest[i / 2] = static_cast<uint8_t>(digest[i / 2] << 4 | v);
    }
    return add_digest(s.principal, s.role, digest, scopes_of(s.role));
}

ktl::Result<const Principal*> KeyStore::authenticate(std::string_view presented, const crypto::Digest* hashed) const {
    if (presented.empty() || presented.size() > kMaxSecret)
        return ktl::Error::InvalidArgs;
    const crypto::Digest digest = hashed ? *hashed : crypto::Sha256::hash(presented);
    const Principal* match = nullptr;
    for (size_t i = 0; i < m_count; ++i) { // no early exit
        bool eq = crypto::equal_constant_time(m_entries[i].digest, digest);
        match = eq ? &m_entries[i].principal : match;
    }
    if (!match)
        return ktl::Error::NotFound;
    return match;
}

ktl::Result<const Principal*> KeyStore::set_limits(std::string_view principal, const PrincipalLimits& limits) {
    for (size_t i = 0; i < m_count; ++i) {
        if (principal == m_entries[i].principal.name) {
            m_entries[i].principal.limits = limits;
            if (limits.has_scopes) // only ever fewer than the role grants
                m_entries[i].principal.scopes &= limits.scopes;
            return &m_entries[i].principal;
        }
    }
    return ktl::Error::NotFound;
}

const Principal* KeyStore::by_id(uint16_t id) const {
    return id >= 1 && id <= m_count ? &m_entries[id - 1].principal : nullptr;
}

} // namespace mcp

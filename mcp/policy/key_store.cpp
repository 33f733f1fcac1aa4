#include "key_store.h"

#include <ktl/format.h>

namespace mcp {

ktl::Result<uint16_t> KeyStore::add(std::string_view principal, Role role, std::string_view secret, uint32_t scopes) {
    if (principal.empty() || principal.size() > Principal::kNameMax || secret.size() < kMinSecret ||
        secret.size() > kMaxSecret || (scopes & ~scopes_of(role)) != 0)
        return ktl::Error::InvalidArgs;
    for (char c : principal) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.';
        if (!ok)
            return ktl::Error::InvalidArgs;
    }
    if (m_count == kMaxKeys)
        return ktl::Error::Full;
    crypto::Digest digest = crypto::Sha256::hash(secret);
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

ktl::Result<uint16_t> KeyStore::add_spec(std::string_view spec) {
    size_t first = spec.find(':');
    if (first == std::string_view::npos)
        return ktl::Error::InvalidArgs;
    auto role = parse_role(spec.substr(0, first));
    if (!role || *role == Role::Anonymous)
        return ktl::Error::InvalidArgs;
    std::string_view rest = spec.substr(first + 1);
    size_t second = rest.find(':');
    char generated[Principal::kNameMax + 1];
    std::string_view principal;
    std::string_view secret;
    if (second == std::string_view::npos) {
        ktl::Formatter f(generated, sizeof generated);
        f.append("%s-%zu", role_name(*role), m_count + 1);
        principal = std::string_view(generated, f.length());
        secret = rest;
    } else {
        principal = rest.substr(0, second);
        secret = rest.substr(second + 1);
    }
    return add(principal, *role, secret);
}

ktl::Result<const Principal*> KeyStore::authenticate(std::string_view presented) const {
    if (presented.empty() || presented.size() > kMaxSecret)
        return ktl::Error::InvalidArgs;
    crypto::Digest digest = crypto::Sha256::hash(presented);
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

// Single-use execution tokens. The MCP layer mints one per authorised tool call, bound to a hash
// of (principal, tool, validated arguments); the tool task redeems it once. Anything missing,
// stale or mismatched fails closed and still burns the token, so a stolen or replayed token
// cannot be retried with other arguments or later.
#include <cap/capability.h>

namespace cap {

using ktl::Error;

ktl::Result<Slot> CapabilitySpace::mint_token(CapTable& table, ObjectId object, Rights rights, uint64_t badge,
                                              uint64_t expires_at_ns, uint64_t binding) {
    return make_root(table, object, rights, badge, true, expires_at_ns, binding);
}

ktl::Result<Slot> CapabilitySpace::issue_token(CapTable& src, Slot src_slot, CapTable& dst, Rights rights,
                                               uint64_t expires_at_ns, uint64_t binding, uint64_t now_ns) {
    uint32_t parent = TRY(derivable(src, src_slot, dst));
    const CapNode& p = m_nodes[parent];
    if (p.expires_at_ns != 0 && now_ns >= p.expires_at_ns)
        return Error::TimedOut;
    if ((rights & rights::kManage) != Rights::None || rights == Rights::None)
        return Error::InvalidArgs;
    if (!has_rights(p.rights, rights))
        return Error::AccessDenied; // never more than the issuer holds
    uint32_t index = TRY(add_child(parent, dst));
    CapNode& t = m_nodes[index];
    const CapNode& source = m_nodes[parent];
    t.rights = rights;
    t.badge = source.badge;
    t.flags |= CapNode::kToken;
    // Never outlives the issuer's own deadline.
    t.expires_at_ns = source.expires_at_ns != 0 && source.expires_at_ns < expires_at_ns ? source.expires_at_ns
                                                                                        : expires_at_ns;
    t.binding = binding;
    return Slot(t.slot);
}

ktl::Result<LookupResult> CapabilitySpace::redeem(CapTable& table, Slot slot, uint64_t now_ns,
                                                  uint64_t expected_binding) {
    uint32_t index = node_at(table, slot);
    if (index == kNil)
        return Error::BadHandle;
    CapNode& n = m_nodes[index];
    if (!(n.flags & CapNode::kToken))
        return Error::InvalidArgs; // an ordinary capability is not consumed by mistake

    // Consumed whatever the outcome: a refused token is gone; a good one stops being a token.
    LookupResult result { m_registry.ptr(n.object), n.object, n.type, n.rights, n.badge };
    bool ok = result.ptr != nullptr && now_ns < n.expires_at_ns && n.binding == expected_binding;
    if (ok && n.parent != kNil) {
        n.flags = static_cast<uint8_t>(n.flags & ~CapNode::kToken);
        n.binding = 0; // keeps its place under the issuer and its deadline
        result.kept = true;
        return result;
    }
    Error why = result.ptr == nullptr       ? Error::BadHandle
                : now_ns >= n.expires_at_ns ? Error::TimedOut
                                            : Error::AccessDenied;
    free_leaf(index); // tokens have no children (no Grant), so this is the whole subtree
    if (!ok)
        return why;
    return result;
}

} // namespace cap

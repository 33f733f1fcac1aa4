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

ktl::Result<LookupResult> CapabilitySpace::redeem(CapTable& table, Slot slot, uint64_t now_ns,
                                                  uint64_t expected_binding) {
    uint32_t index = node_at(table, slot);
    if (index == kNil)
        return Error::BadHandle;
    const CapNode& n = m_nodes[index];
    if (!(n.flags & CapNode::kToken))
        return Error::InvalidArgs; // an ordinary capability is not consumed by mistake

    // Copy what we need, then consume: from here on every outcome leaves the slot empty.
    LookupResult result{m_registry.ptr(n.object), n.object, n.type, n.rights, n.badge};
    uint64_t expires_at_ns = n.expires_at_ns;
    uint64_t binding = n.binding;
    free_leaf(index); // tokens are roots without children (no Grant), so this is the whole subtree

    if (result.ptr == nullptr)
        return Error::BadHandle;
    if (now_ns >= expires_at_ns)
        return Error::TimedOut;
    if (binding != expected_binding)
        return Error::AccessDenied;
    return result;
}

} // namespace cap

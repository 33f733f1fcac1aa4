// Introspection (slot listings for the introspection syscalls) and the structural self-check.
#include <cap/capability.h>

namespace cap {

using ktl::Error;

SlotInfo CapabilitySpace::info_of(uint32_t index) const {
    const CapNode& n = m_nodes[index];
    SlotInfo info;
    info.slot = n.slot;
    info.type = n.type;
    info.rights = n.rights;
    info.badge = n.badge;
    info.object = n.object;
    info.object_live = m_registry.is_live(n.object);
    info.token = (n.flags & CapNode::kToken) != 0;
    info.expires_at_ns = n.expires_at_ns;
    if (n.parent != kNil) {
        info.parent_table = m_nodes[n.parent].table;
        info.parent_slot = m_nodes[n.parent].slot;
    }
    uint32_t children = 0;
    for (uint32_t c = n.first_child; c != kNil && children < m_nodes.size(); c = m_nodes[c].next_sibling)
        ++children;
    info.children = children;
    return info;
}

size_t CapabilitySpace::list_slots(const CapTable& table, std::span<SlotInfo> out) const {
    if (!table_ok(table))
        return 0;
    size_t count = 0;
    for (Slot s = 0; s < kCapSlots; ++s) {
        uint32_t n = table.m_slots[s];
        if (n == kNil)
            continue;
        if (count < out.size())
            out[count] = info_of(n);
        ++count;
    }
    return count;
}

ktl::Result<SlotInfo> CapabilitySpace::slot_info(const CapTable& table, Slot slot) const {
    uint32_t n = node_at(table, slot);
    if (n == kNil)
        return Error::BadHandle;
    return info_of(n);
}

ktl::Result<void> CapabilitySpace::verify() const {
    const size_t cap = m_nodes.size();
    // Free list: only unused nodes, no cycle, length matches the counter.
    size_t free_seen = 0;
    for (uint32_t i = m_free_head; i != kNil; i = m_nodes[i].next_sibling) {
        if (i >= cap || free_seen >= cap || (m_nodes[i].flags & CapNode::kUsed))
            return Error::Corrupt;
        ++free_seen;
    }
    if (free_seen != m_free_nodes)
        return Error::Corrupt;

    size_t used = 0;
    size_t with_parent = 0;
    for (uint32_t i = 0; i < cap; ++i) {
        const CapNode& n = m_nodes[i];
        if (!(n.flags & CapNode::kUsed))
            continue;
        ++used;
        // Back-pointer into a live table.
        if (n.table >= m_tables.size() || !m_tables[n.table].m_live || n.slot >= kCapSlots ||
            m_tables[n.table].m_slots[n.slot] != i)
            return Error::Corrupt;
        // While the object lives, the capability's type is the object's type.
        if (m_registry.is_live(n.object) && m_registry.type(n.object) != n.type)
            return Error::Corrupt;
        const bool token = (n.flags & CapNode::kToken) != 0;
        if (token && n.first_child != kNil) // a token has no children (it cannot be minted from)
            return Error::Corrupt;
        if (n.parent != kNil) {
            ++with_parent;
            if (n.parent >= cap)
                return Error::Corrupt;
            const CapNode& p = m_nodes[n.parent];
            if (!(p.flags & CapNode::kUsed) || !(p.object == n.object) || p.type != n.type ||
                !has_rights(p.rights, n.rights) || (p.badge != 0 && p.badge != n.badge))
                return Error::Corrupt;
        }
        // Children list: doubly linked and pointing back here.
        uint32_t prev = kNil;
        size_t guard = 0;
        for (uint32_t c = n.first_child; c != kNil; c = m_nodes[c].next_sibling) {
            if (c >= cap || ++guard > cap || m_nodes[c].parent != i || m_nodes[c].prev_sibling != prev)
                return Error::Corrupt;
            prev = c;
        }
        // Acyclic: the parent chain reaches a root within `cap` steps.
        uint32_t a = n.parent;
        for (size_t depth = 0; a != kNil; a = m_nodes[a].parent) {
            if (++depth > cap)
                return Error::Corrupt;
        }
    }
    if (used + m_free_nodes != cap)
        return Error::Corrupt;
    (void)with_parent;

    // Tables: occupancy counters and slot -> node -> slot consistency.
    size_t slots_used = 0;
    size_t live_tables = 0;
    for (const CapTable& t : m_tables) {
        if (!t.m_live)
            continue;
        ++live_tables;
        uint32_t in_table = 0;
        for (Slot s = 0; s < kCapSlots; ++s) {
            uint32_t i = t.m_slots[s];
            if (i == kNil)
                continue;
            if (i >= cap || !(m_nodes[i].flags & CapNode::kUsed) || m_nodes[i].table != t.m_index ||
                m_nodes[i].slot != s)
                return Error::Corrupt;
            ++in_table;
        }
        if (in_table != t.m_used)
            return Error::Corrupt;
        slots_used += in_table;
    }
    if (slots_used != used || live_tables != m_live_tables)
        return Error::Corrupt;
    return {};
}

} // namespace cap

// Capability tables and the derivation tree: table lifetime, grant/mint/revoke/remove/transfer
// and lookup. Tokens live in tokens.cpp, introspection and verify() in introspect.cpp.
#include <cap/capability.h>

namespace cap {

using ktl::Error;

void CapabilitySpace::reset(std::span<ObjectEntry> objects, std::span<CapNode> nodes, std::span<CapTable> tables) {
    m_registry.reset(objects);
    m_nodes = nodes.size() >= kNil ? nodes.first(kNil - 1) : nodes;
    m_tables = tables.size() >= kNoTable ? tables.first(kNoTable - 1) : tables;
    m_free_head = kNil;
    m_free_nodes = m_nodes.size();
    m_live_tables = 0;
    for (size_t i = m_nodes.size(); i > 0; --i) {
        CapNode& n = m_nodes[i - 1];
        n = CapNode {};
        n.parent = n.first_child = n.prev_sibling = kNil;
        n.next_sibling = m_free_head;
        m_free_head = uint32_t(i - 1);
    }
    for (size_t i = 0; i < m_tables.size(); ++i) {
        m_tables[i] = CapTable {};
        m_tables[i].m_index = uint16_t(i);
        m_tables[i].m_slots.fill(kNil);
    }
}

// --- Tables ---

ktl::Result<CapTable*> CapabilitySpace::create_table() {
    for (CapTable& t : m_tables) {
        if (t.m_live)
            continue;
        t.m_live = true;
        t.m_used = 0;
        t.m_slots.fill(kNil);
        ++m_live_tables;
        return &t;
    }
    return Error::Full;
}

ktl::Result<size_t> CapabilitySpace::destroy_table(CapTable& table) {
    if (!table_ok(table))
        return Error::BadHandle;
    size_t removed = 0;
    // Removing one subtree may empty later slots of this same table; node_at re-reads each slot.
    for (Slot s = 0; s < kCapSlots; ++s) {
        uint32_t n = node_at(table, s);
        if (n == kNil)
            continue;
        removed += free_descendants(n);
        free_leaf(n);
        ++removed;
    }
    table.m_live = false;
    --m_live_tables;
    return removed;
}

CapTable* CapabilitySpace::table_by_id(uint16_t id) {
    if (id >= m_tables.size() || !m_tables[id].m_live)
        return nullptr;
    return &m_tables[id];
}

bool CapabilitySpace::table_ok(const CapTable& table) const {
    // The table must be one of ours (not a stray copy) and live.
    return table.m_index < m_tables.size() && &m_tables[table.m_index] == &table && table.m_live;
}

uint32_t CapabilitySpace::node_at(const CapTable& table, Slot slot) const {
    if (!table_ok(table) || slot >= kCapSlots)
        return kNil;
    return table.m_slots[slot];
}

Slot CapabilitySpace::free_slot(const CapTable& table) const {
    for (Slot s = 0; s < kCapSlots; ++s) {
        if (table.m_slots[s] == kNil)
            return s;
    }
    return kNoSlot;
}

// --- Node pool and tree links ---

uint32_t CapabilitySpace::alloc_node(CapTable& table, Slot slot) {
    uint32_t index = m_free_head;
    CapNode& n = m_nodes[index];
    m_free_head = n.next_sibling;
    --m_free_nodes;
    n = CapNode {};
    n.parent = n.first_child = n.next_sibling = n.prev_sibling = kNil;
    n.flags = CapNode::kUsed;
    n.table = table.m_index;
    n.slot = uint16_t(slot);
    table.m_slots[slot] = index;
    ++table.m_used;
    return index;
}

void CapabilitySpace::link_child(uint32_t parent, uint32_t child) {
    CapNode& p = m_nodes[parent];
    CapNode& c = m_nodes[child];
    c.parent = parent;
    c.prev_sibling = kNil;
    c.next_sibling = p.first_child;
    if (p.first_child != kNil)
        m_nodes[p.first_child].prev_sibling = child;
    p.first_child = child;
}

void CapabilitySpace::unlink(uint32_t index) {
    CapNode& n = m_nodes[index];
    if (n.prev_sibling != kNil)
        m_nodes[n.prev_sibling].next_sibling = n.next_sibling;
    else if (n.parent != kNil)
        m_nodes[n.parent].first_child = n.next_sibling;
    if (n.next_sibling != kNil)
        m_nodes[n.next_sibling].prev_sibling = n.prev_sibling;
    n.parent = n.next_sibling = n.prev_sibling = kNil;
}

void CapabilitySpace::free_leaf(uint32_t index) {
    unlink(index);
    CapNode& n = m_nodes[index];
    CapTable& t = m_tables[n.table];
    t.m_slots[n.slot] = kNil;
    --t.m_used;
    n = CapNode {};
    n.parent = n.first_child = n.prev_sibling = kNil;
    n.next_sibling = m_free_head;
    m_free_head = index;
    ++m_free_nodes;
}

size_t CapabilitySpace::free_descendants(uint32_t root) {
    // Post-order without a stack: descend along first children to a leaf, free it, step back to
    // its parent and repeat. Each node is descended into once and freed once, so the walk takes
    // at most 2 * nodes steps; the bound only guards against a corrupted tree.
    size_t freed = 0;
    uint32_t cur = root;
    for (size_t steps = 0; steps <= 2 * m_nodes.size() + 1; ++steps) {
        uint32_t child = m_nodes[cur].first_child;
        if (child != kNil) {
            cur = child;
            continue;
        }
        if (cur == root)
            break;
        uint32_t parent = m_nodes[cur].parent;
        free_leaf(cur);
        ++freed;
        cur = parent;
    }
    return freed;
}

// --- Operations ---

ktl::Result<Slot> CapabilitySpace::make_root(CapTable& table, ObjectId object, Rights rights, uint64_t badge,
                                             bool token, uint64_t expires_at_ns, uint64_t binding) {
    if (!table_ok(table) || !m_registry.is_live(object))
        return Error::BadHandle;
    ObjectType type = m_registry.type(object);
    if (!has_rights(default_rights(type), rights))
        return Error::InvalidArgs;
    if (token && (rights & rights::kManage) != Rights::None)
        return Error::InvalidArgs;
    Slot slot = free_slot(table);
    if (slot == kNoSlot)
        return Error::Full;
    if (m_free_head == kNil)
        return Error::NoMemory;

    uint32_t index = alloc_node(table, slot);
    CapNode& n = m_nodes[index];
    n.object = object;
    n.type = type;
    n.rights = rights;
    n.badge = badge;
    if (token) {
        n.flags |= CapNode::kToken;
        n.expires_at_ns = expires_at_ns;
        n.binding = binding;
    }
    return slot;
}

ktl::Result<Slot> CapabilitySpace::grant_root(CapTable& table, ObjectId object, Rights rights, uint64_t badge) {
    return make_root(table, object, rights, badge, false, 0, 0);
}

ktl::Result<uint32_t> CapabilitySpace::derivable(const CapTable& src, Slot src_slot, const CapTable& dst) const {
    if (!table_ok(src) || !table_ok(dst))
        return Error::BadHandle;
    uint32_t parent = node_at(src, src_slot);
    if (parent == kNil || !m_registry.is_live(m_nodes[parent].object))
        return Error::BadHandle;
    const CapNode& p = m_nodes[parent];
    if ((p.flags & CapNode::kToken) || !has_rights(p.rights, Rights::Grant))
        return Error::AccessDenied;
    return parent;
}

ktl::Result<uint32_t> CapabilitySpace::add_child(uint32_t parent, CapTable& dst) {
    Slot slot = free_slot(dst);
    if (slot == kNoSlot)
        return Error::Full;
    if (m_free_head == kNil)
        return Error::NoMemory;
    uint32_t index = alloc_node(dst, slot);
    CapNode& c = m_nodes[index];
    c.object = m_nodes[parent].object;
    c.type = m_nodes[parent].type;
    link_child(parent, index);
    return index;
}

ktl::Result<Slot> CapabilitySpace::mint(CapTable& src, Slot src_slot, CapTable& dst, Rights mask, uint64_t new_badge) {
    uint32_t parent = TRY(derivable(src, src_slot, dst));
    const CapNode& p = m_nodes[parent];
    // A badge, once set, identifies the holder to the server: it can be inherited, never changed.
    if (p.badge != 0 && new_badge != 0 && new_badge != p.badge)
        return Error::InvalidArgs;
    uint32_t index = TRY(add_child(parent, dst));
    CapNode& c = m_nodes[index];
    const CapNode& source = m_nodes[parent];
    c.rights = source.rights & mask; // never more than the source holds
    c.badge = source.badge != 0 ? source.badge : new_badge;
    c.expires_at_ns = source.expires_at_ns; // a capability with a deadline passes it on
    return Slot(c.slot);
}

ktl::Result<size_t> CapabilitySpace::revoke(CapTable& table, Slot slot) {
    uint32_t n = node_at(table, slot);
    if (n == kNil)
        return Error::BadHandle;
    if (!has_rights(m_nodes[n].rights, Rights::Revoke))
        return Error::AccessDenied;
    return free_descendants(n);
}

ktl::Result<size_t> CapabilitySpace::remove(CapTable& table, Slot slot) {
    uint32_t n = node_at(table, slot);
    if (n == kNil)
        return Error::BadHandle;
    size_t removed = free_descendants(n);
    free_leaf(n);
    return removed + 1;
}

ktl::Result<Slot> CapabilitySpace::transfer(CapTable& src, Slot src_slot, CapTable& dst) {
    if (!table_ok(dst))
        return Error::BadHandle;
    uint32_t n = node_at(src, src_slot);
    if (n == kNil)
        return Error::BadHandle;
    CapNode& node = m_nodes[n];
    if ((node.flags & CapNode::kToken) || !has_rights(node.rights, Rights::Grant))
        return Error::AccessDenied;
    Slot slot = free_slot(dst);
    if (slot == kNoSlot)
        return Error::Full;

    src.m_slots[src_slot] = kNil;
    --src.m_used;
    dst.m_slots[slot] = n;
    ++dst.m_used;
    node.table = dst.m_index;
    node.slot = uint16_t(slot);
    return slot;
}

ktl::Result<LookupResult> CapabilitySpace::lookup(const CapTable& table, Slot slot, ObjectType expected, Rights needed,
                                                  uint64_t now_ns) const {
    uint32_t index = node_at(table, slot);
    if (index == kNil)
        return Error::BadHandle;
    const CapNode& n = m_nodes[index];
    void* ptr = m_registry.ptr(n.object);
    if (ptr == nullptr)
        return Error::BadHandle; // object destroyed (generation moved on)
    if (n.flags & CapNode::kToken)
        return Error::AccessDenied; // tokens are only usable through redeem
    if (n.expires_at_ns != 0 && now_ns >= n.expires_at_ns)
        return Error::TimedOut; // a redeemed token's capability, past the call's deadline
    if (n.type != expected)
        return Error::WrongType;
    if (!has_rights(n.rights, needed))
        return Error::AccessDenied;
    return LookupResult { ptr, n.object, n.type, n.rights, n.badge };
}

} // namespace cap

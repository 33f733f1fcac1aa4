#pragma once
// The capability system: an object registry, a global pool of capability nodes forming the
// derivation tree, and one fixed-size capability table per task (issue 4, "Capabilities and
// system calls"; ideas from seL4's CDT and Zircon's handle table, no code taken).
//
// Model
//  - A capability is {object id (with generation), type, rights, badge} in a slot of a task's
//    CapTable. Every capability is a node of a derivation forest: grant_root/mint_token make
//    roots, mint makes a child of its source (possibly in another table).
//  - Invariants (checked by verify()): a child names the same object as its parent, its rights
//    are a subset of the parent's, and a badged parent's badge is the child's badge.
//  - Destroying an object bumps the registry generation: every capability naming it stays in
//    its slot but is dead (lookup/mint/redeem -> BadHandle) until removed; revoke/remove still
//    work on it so the holder can clean up.
//  - remove() deletes a capability together with its whole derivation subtree (in every
//    table). Children are never re-parented, so "every capability's authority traces back to a
//    live root" holds at all times and dropping a capability also withdraws what was delegated
//    from it. Use transfer() to hand a capability over without withdrawing it.
//  - Single-use tokens cannot be looked up, minted or transferred, carry no Grant/Revoke, and
//    are consumed by the first redeem whatever its outcome. mint_token makes one a root;
//    issue_token derives one from the issuer's capability, so revoking or removing that reaches
//    the token, and the capability a successful redeem turns it into (in place, in the same
//    slot), which also dies at the token's deadline: lookups after it fail with TimedOut.
//  - Every operation validates all arguments first ("decode"), then mutates ("invoke"), so a
//    failed call changes nothing (except redeem, which consumes the token on purpose).
//  - Slots are allocated lowest-free-first. All loops are bounded by pool sizes; the subtree
//    walk is iterative. Not thread-safe: the kernel holds its capability lock around calls.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <cap/object_registry.h>
#include <cap/rights.h>
#include <ktl/result.h>

namespace cap {

using Slot = uint32_t;
constexpr uint32_t kCapSlots = 64; // slots per task table
constexpr Slot kNoSlot = 0xffffffffu;
constexpr uint16_t kNoTable = 0xffffu;

// One derivation-tree node. Public so owners can size storage; only CapabilitySpace touches it.
struct CapNode {
    static constexpr uint8_t kUsed = 1;
    static constexpr uint8_t kToken = 2;

    ObjectId object;
    uint64_t badge = 0; // 0 = unbadged
    uint64_t expires_at_ns =
        0; // tokens: redeemable while now_ns < it; redeemed ones: usable while now_ns < it (0: no deadline)
    uint64_t binding = 0; // tokens: must equal redeem's expected_binding
    Rights rights = Rights::None;
    uint32_t parent = 0; // node indices, kNil when absent
    uint32_t first_child = 0;
    uint32_t next_sibling = 0; // also the free-list link
    uint32_t prev_sibling = 0;
    uint16_t table = kNoTable; // back-pointer: the slot holding this node
    uint16_t slot = 0;
    ObjectType type = ObjectType::None;
    uint8_t flags = 0;
};

class CapTable {
public:
    uint16_t id() const { return m_index; }
    uint32_t used() const { return m_used; }
    static constexpr uint32_t capacity() { return kCapSlots; }

private:
    friend class CapabilitySpace;
    std::array<uint32_t, kCapSlots> m_slots {}; // node index or kNil
    uint32_t m_used = 0;
    uint16_t m_index = 0;
    bool m_live = false;
};

struct LookupResult {
    void* ptr = nullptr;
    ObjectId object;
    ObjectType type = ObjectType::None;
    Rights rights = Rights::None;
    uint64_t badge = 0;
    bool kept = false; // redeem: the token became this capability in its own slot (issue_token's)
};

// Introspection record for one occupied slot.
struct SlotInfo {
    Slot slot = kNoSlot;
    ObjectType type = ObjectType::None;
    Rights rights = Rights::None;
    uint64_t badge = 0;
    ObjectId object;
    bool object_live = false;
    bool token = false;
    uint64_t expires_at_ns = 0;       // tokens and redeemed tokens (0: none)
    uint16_t parent_table = kNoTable; // kNoTable / kNoSlot for a root
    Slot parent_slot = kNoSlot;
    uint32_t children = 0; // direct derivations
};

class CapabilitySpace {
public:
    static constexpr uint32_t kNil = 0xffffffffu;

    CapabilitySpace(std::span<ObjectEntry> objects, std::span<CapNode> nodes, std::span<CapTable> tables) {
        reset(objects, nodes, tables);
    }
    CapabilitySpace(const CapabilitySpace&) = delete;
    CapabilitySpace& operator=(const CapabilitySpace&) = delete;

    // Forgets everything and adopts the given storage. O(objects + nodes + tables).
    void reset(std::span<ObjectEntry> objects, std::span<CapNode> nodes, std::span<CapTable> tables);

    // --- Objects (kernel only) ---
    // O(1). InvalidArgs (type None, null ptr), Full.
    ktl::Result<ObjectId> create_object(ObjectType type, void* ptr, uint16_t owner = 0) {
        return m_registry.create(type, ptr, owner);
    }
    // O(1): every capability naming `id` is dead from now on. BadHandle.
    ktl::Result<void> destroy_object(ObjectId id) { return m_registry.destroy(id); }
    void* object_ptr(ObjectId id) const { return m_registry.ptr(id); }
    ObjectType object_type(ObjectId id) const { return m_registry.type(id); }
    const ObjectRegistry& registry() const { return m_registry; }

    // --- Tables (one per task) ---
    // O(tables). Full when every table is in use.
    ktl::Result<CapTable*> create_table();
    // Removes every capability in the table with its subtree, then frees the table.
    // O(slots + removed nodes). BadHandle for a table that is not live. Returns caps removed.
    ktl::Result<size_t> destroy_table(CapTable& table);
    CapTable* table_by_id(uint16_t id);

    // --- Capabilities ---
    // Kernel-only original capability. rights must be within default_rights(type).
    // O(slots). BadHandle (table, dead object), InvalidArgs (rights), Full (table), NoMemory (pool).
    ktl::Result<Slot> grant_root(CapTable& table, ObjectId object, Rights rights, uint64_t badge);
    // Derives a child of src in dst (dst may be src): rights = src.rights & mask, badge =
    // src.badge if badged, else new_badge. O(slots).
    // BadHandle (tables, slot, dead object), AccessDenied (no Grant, token), InvalidArgs (new_badge
    // conflicts with the source's badge), Full (dst table), NoMemory (node pool).
    ktl::Result<Slot> mint(CapTable& src, Slot src_slot, CapTable& dst, Rights mask, uint64_t new_badge);
    // Removes every descendant of the capability, in every table; keeps the capability.
    // Requires Revoke. O(descendants). BadHandle, AccessDenied. Returns the number removed.
    ktl::Result<size_t> revoke(CapTable& table, Slot slot);
    // Deletes the capability and its whole subtree. No right needed (it is the caller's own
    // slot). O(subtree). BadHandle. Returns the number removed (>= 1).
    ktl::Result<size_t> remove(CapTable& table, Slot slot);
    // Moves the capability (keeping its place in the derivation tree) to the lowest free slot
    // of dst. Requires Grant. O(slots). BadHandle, AccessDenied (no Grant, token), Full.
    ktl::Result<Slot> transfer(CapTable& src, Slot src_slot, CapTable& dst);
    // The single check every system call makes. O(1).
    // BadHandle (table, empty/out-of-range slot, dead object), AccessDenied (token: use redeem),
    // WrongType, AccessDenied (missing rights).
    // A capability with a deadline (a redeemed issue_token) fails with TimedOut from now_ns >= it.
    ktl::Result<LookupResult> lookup(const CapTable& table, Slot slot, ObjectType expected, Rights needed,
                                     uint64_t now_ns = 0) const;

    // --- Single-use execution tokens ---
    // Kernel-only: a root capability (of the object's type) flagged as a token. rights must be
    // within default_rights(type) and exclude Grant and Revoke. Errors as grant_root.
    ktl::Result<Slot> mint_token(CapTable& table, ObjectId object, Rights rights, uint64_t badge,
                                 uint64_t expires_at_ns, uint64_t binding);
    // Derives a token from the capability in src_slot into dst: a child of it (needs Grant on it;
    // a token or expired source is refused), rights within the source's and without Grant and
    // Revoke, the source's badge. AccessDenied (no Grant, token source, rights beyond the
    // source's), InvalidArgs (Grant/Revoke asked), otherwise errors as mint.
    ktl::Result<Slot> issue_token(CapTable& src, Slot src_slot, CapTable& dst, Rights rights, uint64_t expires_at_ns,
                                  uint64_t binding, uint64_t now_ns);
    // Consumes the token in `slot` and, if it is still valid, returns what it names. A token
    // from issue_token becomes, in its slot, an ordinary capability (still the issuer's child)
    // that expires with the token (result.kept); a root token (mint_token) leaves the slot empty.
    // BadHandle (table, empty slot: nothing consumed), InvalidArgs (not a token: nothing
    // consumed); the token is consumed before any of: BadHandle (object destroyed), TimedOut
    // (now_ns >= expires_at_ns), AccessDenied (binding mismatch). O(1).
    ktl::Result<LookupResult> redeem(CapTable& table, Slot slot, uint64_t now_ns, uint64_t expected_binding);

    // --- Introspection ---
    // Writes up to out.size() records for occupied slots in slot order; returns how many slots
    // are occupied (may exceed out.size()). O(slots).
    size_t list_slots(const CapTable& table, std::span<SlotInfo> out) const;
    ktl::Result<SlotInfo> slot_info(const CapTable& table, Slot slot) const;
    size_t live_nodes() const { return m_nodes.size() - m_free_nodes; }
    size_t free_nodes() const { return m_free_nodes; }
    size_t node_capacity() const { return m_nodes.size(); }
    size_t live_tables() const { return m_live_tables; }
    // Full structural check (links, back-pointers, subset rights, badges, counts, acyclicity).
    // Corrupt on any violation. O(nodes * depth); for tests and debug builds.
    ktl::Result<void> verify() const;

private:
    bool table_ok(const CapTable& table) const;
    // Node index in an occupied slot of a live table, or kNil.
    uint32_t node_at(const CapTable& table, Slot slot) const;
    Slot free_slot(const CapTable& table) const;
    // Allocates a node and places it in `slot` of `table`. The caller has checked both.
    uint32_t alloc_node(CapTable& table, Slot slot);
    void link_child(uint32_t parent, uint32_t child);
    // The node in src_slot if a capability may be derived from it (live, not a token, Grant).
    ktl::Result<uint32_t> derivable(const CapTable& src, Slot src_slot, const CapTable& dst) const;
    // A new node in dst's lowest free slot, a child of `parent` naming its object; Full, NoMemory.
    ktl::Result<uint32_t> add_child(uint32_t parent, CapTable& dst);
    void unlink(uint32_t index);
    // Unlinks a childless node, clears its slot and returns it to the pool.
    void free_leaf(uint32_t index);
    // Frees every descendant of `root` (iterative post-order walk). Returns the count.
    size_t free_descendants(uint32_t root);
    SlotInfo info_of(uint32_t index) const;
    ktl::Result<Slot> make_root(CapTable& table, ObjectId object, Rights rights, uint64_t badge, bool token,
                                uint64_t expires_at_ns, uint64_t binding);

    ObjectRegistry m_registry;
    std::span<CapNode> m_nodes;
    std::span<CapTable> m_tables;
    uint32_t m_free_head = kNil;
    size_t m_free_nodes = 0;
    size_t m_live_tables = 0;
};

namespace detail {
template <size_t MaxObjects, size_t MaxNodes, size_t MaxTables>
struct CapStorage {
    std::array<ObjectEntry, MaxObjects> m_object_storage {};
    std::array<CapNode, MaxNodes> m_node_storage {};
    std::array<CapTable, MaxTables> m_table_storage {};
};
} // namespace detail

// A CapabilitySpace with its own fixed storage.
template <size_t MaxObjects, size_t MaxNodes, size_t MaxTables>
class CapabilitySystem : private detail::CapStorage<MaxObjects, MaxNodes, MaxTables>, public CapabilitySpace {
    using Storage = detail::CapStorage<MaxObjects, MaxNodes, MaxTables>;
    static_assert(MaxObjects > 0 && MaxObjects < CapabilitySpace::kNil);
    static_assert(MaxNodes > 0 && MaxNodes < CapabilitySpace::kNil);
    static_assert(MaxTables > 0 && MaxTables < kNoTable);

public:
    // Storage is a base declared first, so it is constructed before CapabilitySpace adopts it.
    CapabilitySystem()
        : Storage(), CapabilitySpace(Storage::m_object_storage, Storage::m_node_storage, Storage::m_table_storage) {}
};

} // namespace cap

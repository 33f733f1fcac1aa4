#include "kcap.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../sched/scheduler.h"

#include <new>

namespace kcap {
namespace {

using Space = cap::CapabilitySystem<1024, 4096, sched::kMaxTasks>;
alignas(Space) unsigned char g_storage[sizeof(Space)];
Space* g_space = nullptr;

cap::CapTable* table_of(sched::Task* task) { return task ? static_cast<cap::CapTable*>(task->cap_table) : nullptr; }

Resolved to_resolved(const cap::LookupResult& r) {
    return Resolved { r.ptr, r.object.raw(), r.type, uint32_t(r.rights), r.badge };
}

} // namespace

void init() { g_space = new (g_storage) Space(); }

ktl::Result<void> attach_task(sched::Task* task) {
    arch::IrqGuard guard;
    auto* table = TRY(g_space->create_table());
    task->cap_table = table;
    return {};
}

void detach_task(sched::Task* task) {
    arch::IrqGuard guard;
    if (auto* table = table_of(task))
        (void)g_space->destroy_table(*table);
    task->cap_table = nullptr;
}

ktl::Result<uint64_t> register_object(ObjectType type, void* object) {
    arch::IrqGuard guard;
    auto id = TRY(g_space->create_object(type, object));
    return id.raw();
}

namespace {

ktl::Result<uint32_t> create_grant(sched::Task* task, ObjectType type, void* object, uint32_t rights, uint64_t badge,
                                   uint64_t* object_id, uint16_t owner) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    auto id = TRY(g_space->create_object(type, object, owner));
    auto slot = g_space->grant_root(*table, id, cap::Rights(rights) & cap::default_rights(type), badge);
    if (!slot) {
        (void)g_space->destroy_object(id);
        return slot.error();
    }
    if (object_id)
        *object_id = id.raw();
    return *slot;
}

} // namespace

ktl::Result<uint32_t> create_and_grant(sched::Task* task, ObjectType type, void* object, uint32_t rights,
                                       uint64_t badge, uint64_t* object_id) {
    return create_grant(task, type, object, rights, badge, object_id, 0);
}

ktl::Result<uint32_t> create_owned_and_grant(sched::Task* task, ObjectType type, void* object, uint32_t rights) {
    return create_grant(task, type, object, rights, 0, nullptr, static_cast<uint16_t>(task->id));
}

size_t destroy_owned(uint32_t owner, void (*destroy)(ObjectType type, void* object)) {
    if (owner == 0)
        return 0;
    arch::IrqGuard guard;
    size_t n = 0;
    cap::ObjectRegistry::Live o;
    for (uint32_t cursor = 0; g_space->registry().next_live(&cursor, &o);) {
        if (o.owner != owner)
            continue;
        (void)g_space->destroy_object(o.id); // every capability to it is dead from here
        destroy(o.type, o.ptr);
        ++n;
    }
    return n;
}

void for_each_object(ObjectType type, void (*fn)(void* object, void* arg), void* arg) {
    arch::IrqGuard guard;
    cap::ObjectRegistry::Live o;
    for (uint32_t cursor = 0; g_space->registry().next_live(&cursor, &o);)
        if (o.type == type)
            fn(o.ptr, arg);
}

ktl::Result<uint32_t> grant_existing(sched::Task* task, uint64_t object_id, uint32_t rights, uint64_t badge) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    auto id = cap::ObjectId::from_raw(object_id);
    auto type = g_space->object_type(id);
    return g_space->grant_root(*table, id, cap::Rights(rights) & cap::default_rights(type), badge);
}

ktl::Result<Resolved> lookup(sched::Task* task, uint32_t slot, ObjectType type, uint32_t rights) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    if (type == ObjectType::None) { // any type: take the slot's own
        auto info = TRY(g_space->slot_info(*table, slot));
        type = info.type;
    }
    auto r = TRY(g_space->lookup(*table, slot, type, cap::Rights(rights), clock::monotonic_ns()));
    return to_resolved(r);
}

ktl::Result<uint32_t> mint(sched::Task* task, uint32_t slot, uint32_t rights_mask, uint64_t badge) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    return g_space->mint(*table, slot, *table, cap::Rights(rights_mask), badge);
}

ktl::Result<uint32_t> mint_into(sched::Task* src, uint32_t slot, sched::Task* dst, uint32_t rights_mask,
                                uint64_t badge) {
    arch::IrqGuard guard;
    auto* from = table_of(src);
    auto* to = table_of(dst);
    if (!from || !to)
        return ktl::Error::BadHandle;
    return g_space->mint(*from, slot, *to, cap::Rights(rights_mask), badge);
}

ktl::Result<void> revoke(sched::Task* task, uint32_t slot) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    TRY_VOID(g_space->revoke(*table, slot));
    return {};
}

ktl::Result<void> remove(sched::Task* task, uint32_t slot) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    TRY_VOID(g_space->remove(*table, slot));
    return {};
}

ktl::Result<uint32_t> mint_token(sched::Task* task, uint64_t object_id, uint32_t rights, uint64_t badge,
                                 uint64_t expires_ns, uint64_t binding) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    return g_space->mint_token(*table, cap::ObjectId::from_raw(object_id), cap::Rights(rights), badge, expires_ns,
                               binding);
}

ktl::Result<uint32_t> issue_token(sched::Task* issuer, uint32_t slot, sched::Task* holder, uint32_t rights,
                                  uint64_t expires_ns, uint64_t binding) {
    arch::IrqGuard guard;
    auto* src = table_of(issuer);
    auto* dst = table_of(holder);
    if (!src || !dst)
        return ktl::Error::BadHandle;
    return g_space->issue_token(*src, slot, *dst, cap::Rights(rights), expires_ns, binding, clock::monotonic_ns());
}

ktl::Result<Resolved> redeem(sched::Task* task, uint32_t slot, uint64_t now_ns, uint64_t binding, bool* kept) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return ktl::Error::BadHandle;
    auto r = TRY(g_space->redeem(*table, slot, now_ns, binding));
    if (kept)
        *kept = r.kept;
    return to_resolved(r);
}

ktl::Result<void> destroy_object(uint64_t object_id) {
    arch::IrqGuard guard;
    return g_space->destroy_object(cap::ObjectId::from_raw(object_id));
}

uint32_t list(sched::Task* task, CapInfo* out, uint32_t max) {
    arch::IrqGuard guard;
    auto* table = table_of(task);
    if (!table)
        return 0;
    cap::SlotInfo infos[cap::kCapSlots];
    size_t n = g_space->list_slots(*table, std::span<cap::SlotInfo>(infos, cap::kCapSlots));
    uint32_t written = 0;
    for (size_t i = 0; i < n && i < cap::kCapSlots && written < max; ++i) {
        out[written++] = CapInfo { infos[i].slot, uint32_t(infos[i].type), uint32_t(infos[i].rights),
                                   infos[i].object.raw(), infos[i].badge };
    }
    return written;
}

const char* type_name(ObjectType type) { return cap::type_name(type); }

SpaceStats stats() {
    arch::IrqGuard guard;
    return SpaceStats { g_space->live_nodes(), g_space->node_capacity(), g_space->registry().live_count(),
                        g_space->registry().capacity() };
}

} // namespace kcap

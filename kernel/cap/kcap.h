#pragma once
// The kernel's capability space: one registry of kernel objects, one capability table per
// task, built on lib/cap. Every system call reaches its object through here.
#include <cstdint>

#include <abi/introspect.h>
#include <abi/rights.h>
#include <cap/capability.h>
#include <cap/rights.h>
#include <ktl/result.h>

namespace sched {
struct Task;
}

namespace kcap {

using cap::ObjectType;

// The rights bits as system calls take them (abi/rights.h).
using abi::kAll;
using abi::kCreate;
using abi::kDrop;
using abi::kExecute;
using abi::kGrant;
using abi::kImport;
using abi::kRead;
using abi::kRevoke;
using abi::kWrite;

void init();
ktl::Result<void> attach_task(sched::Task* task);
void detach_task(sched::Task* task);

// Registers a new kernel object and gives `task` the original capability to it.
ktl::Result<uint32_t> create_and_grant(sched::Task* task, ObjectType type, void* object, uint32_t rights,
                                       uint64_t badge = 0, uint64_t* object_id = nullptr);
// The same for an object that lives only as long as `task`: when the task ends, the kernel
// destroys it (destroy_owned), so a killed task leaves no IPC object or region behind.
ktl::Result<uint32_t> create_owned_and_grant(sched::Task* task, ObjectType type, void* object, uint32_t rights);
// Destroys every object owned by task `owner` (their capabilities die first), handing each to
// `destroy` to be freed; returns how many. Kernel only, IRQs masked by the caller or here.
size_t destroy_owned(uint32_t owner, void (*destroy)(ObjectType type, void* object));
// Calls fn(object, arg) for every live object of `type` (bounded by the registry's capacity).
void for_each_object(ObjectType type, void (*fn)(void* object, void* arg), void* arg);
// Gives `task` a capability to an existing object (kernel-only; e.g. boot-time grants).
ktl::Result<uint32_t> grant_existing(sched::Task* task, uint64_t object_id, uint32_t rights, uint64_t badge = 0);

struct Resolved {
    void* object;
    uint64_t object_id; // cap::ObjectId::raw()
    ObjectType type;
    uint32_t rights;
    uint64_t badge;
};
// type == ObjectType::None accepts any type (used by cap_mint / cap_revoke / cap_delete).
ktl::Result<Resolved> lookup(sched::Task* task, uint32_t slot, ObjectType type, uint32_t rights);

ktl::Result<uint32_t> mint(sched::Task* task, uint32_t slot, uint32_t rights_mask, uint64_t badge);
// Derives src's capability into dst's table (rights within src's, Grant required on src).
ktl::Result<uint32_t> mint_into(sched::Task* src, uint32_t slot, sched::Task* dst, uint32_t rights_mask,
                                uint64_t badge);
ktl::Result<void> revoke(sched::Task* task, uint32_t slot);
ktl::Result<void> remove(sched::Task* task, uint32_t slot);
ktl::Result<uint32_t> mint_token(sched::Task* task, uint64_t object_id, uint32_t rights, uint64_t badge,
                                 uint64_t expires_ns, uint64_t binding);
// A token derived from the issuer's capability in `slot` into the holder's table (see
// cap::CapabilitySpace::issue_token): revoking the issuer's capability reaches it.
ktl::Result<uint32_t> issue_token(sched::Task* issuer, uint32_t slot, sched::Task* holder, uint32_t rights,
                                  uint64_t expires_ns, uint64_t binding);
// kept: the token became an ordinary capability in its own slot (issued tokens).
ktl::Result<Resolved> redeem(sched::Task* task, uint32_t slot, uint64_t now_ns, uint64_t binding, bool* kept = nullptr);
ktl::Result<void> destroy_object(uint64_t object_id);

using abi::CapInfo; // cap_list's rows (abi/introspect.h)
uint32_t list(sched::Task* task, CapInfo* out, uint32_t max);
const char* type_name(ObjectType type);
// Registers an object without granting it to anyone (singletons such as the factory).
ktl::Result<uint64_t> register_object(ObjectType type, void* object);
struct SpaceStats {
    size_t live_nodes;
    size_t node_capacity;
    size_t live_objects;
    size_t object_capacity;
};
SpaceStats stats();

} // namespace kcap

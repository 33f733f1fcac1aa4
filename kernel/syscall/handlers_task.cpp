// Task, time and capability system calls.
#include "../clock.h"
#include "../mm/kheap.h"
#include "../sched/scheduler.h"
#include "../audit/syscall_log.h"
#include "../rng.h"
#include "buffers.h"
#include "handlers.h"
#include "sys.h"

namespace handlers {
namespace {
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
} // namespace

int64_t yield(arch::TrapFrame&, const kcap::Resolved&) {
    sched::yield_current();
    return 0;
}

int64_t exit(arch::TrapFrame& f, const kcap::Resolved&) {
    sched::exit_current(static_cast<int64_t>(f.x[0]), "exit");
    return kBlocked;
}

int64_t sleep(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t ns = f.x[0];
    if (ns == 0) {
        sched::yield_current();
        return 0;
    }
    if (ns > 3600ull * 1000000000ull)
        return err(ktl::Error::InvalidArgs);
    sched::sleep_current(clock::monotonic_ns() + ns);
    return kBlocked;
}

int64_t clock(arch::TrapFrame&, const kcap::Resolved&) { return static_cast<int64_t>(clock::monotonic_ns()); }

int64_t task_self(arch::TrapFrame&, const kcap::Resolved&) { return sched::current()->id; }

int64_t task_join(arch::TrapFrame& f, const kcap::Resolved& object) {
    auto* task = static_cast<sched::Task*>(object.object);
    int64_t code = 0;
    auto r = sched::join(task->id, code, deadline_after(f.x[1]));
    if (!r)
        return err(r.error());
    return *r ? code : kBlocked;
}

int64_t cap_mint(arch::TrapFrame& f, const kcap::Resolved&) {
    auto r = kcap::mint(sched::current(), static_cast<uint32_t>(f.x[0]), static_cast<uint32_t>(f.x[1]), f.x[2]);
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t cap_grant(arch::TrapFrame& f, const kcap::Resolved&) {
    sched::Task* self = sched::current();
    auto target = kcap::lookup(self, static_cast<uint32_t>(f.x[3]), kcap::ObjectType::Task, kcap::kWrite);
    if (!target) {
        audit::record(uint32_t(sys::Number::cap_grant), static_cast<uint32_t>(f.x[3]), uint32_t(kcap::ObjectType::Task),
                      kcap::kWrite, audit::Outcome::Deny, static_cast<int32_t>(target.error()));
        return err(target.error());
    }
    auto* dst = static_cast<sched::Task*>(target->object);
    if (dst->state == sched::TaskState::Dead)
        return err(ktl::Error::BadHandle);
    auto r = kcap::mint_into(self, static_cast<uint32_t>(f.x[0]), dst, static_cast<uint32_t>(f.x[1]), f.x[2]);
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t cap_revoke(arch::TrapFrame& f, const kcap::Resolved&) {
    auto r = kcap::revoke(sched::current(), static_cast<uint32_t>(f.x[0]));
    return r ? 0 : err(r.error());
}

int64_t cap_delete(arch::TrapFrame& f, const kcap::Resolved&) {
    auto r = kcap::remove(sched::current(), static_cast<uint32_t>(f.x[0]));
    return r ? 0 : err(r.error());
}

int64_t token_redeem(arch::TrapFrame& f, const kcap::Resolved&) {
    auto slot = static_cast<uint32_t>(f.x[0]);
    bool kept = false;
    auto r = kcap::redeem(sched::current(), slot, clock::monotonic_ns(), f.x[1], &kept);
    audit::record(uint32_t(sys::Number::token_redeem), slot, uint32_t(kcap::ObjectType::ExecToken), kcap::kExecute,
                  r ? audit::Outcome::Allow : audit::Outcome::Deny, r ? 0 : static_cast<int32_t>(r.error()));
    if (!r)
        return err(r.error());
    // An issued token became, in its own slot, the capability the tool may use for this one
    // call: the issuer's child (revocable through it), the token's rights, dead at its deadline.
    if (kept)
        return slot;
    // A root token (kernel-minted) becomes an ordinary capability to its object, with the
    // token's rights and badge, in the redeemer's table.
    auto granted = kcap::grant_existing(sched::current(), r->object_id, r->rights, r->badge);
    return granted ? static_cast<int64_t>(*granted) : err(granted.error());
}

// The policy side of execution tokens: whoever may grant an object may hand a task a
// single-use, bound, expiring right to it instead of a standing capability.
int64_t token_issue(arch::TrapFrame& f, const kcap::Resolved& object) {
    constexpr uint64_t kMaxValidNs = 60'000'000'000ull;
    uint64_t valid_ns = f.x[4];
    if (valid_ns == 0 || valid_ns > kMaxValidNs)
        return err(ktl::Error::InvalidArgs);
    sched::Task* self = sched::current();
    auto target = kcap::lookup(self, static_cast<uint32_t>(f.x[1]), kcap::ObjectType::Task, kcap::kWrite);
    if (!target) {
        audit::record(uint32_t(sys::Number::token_issue), static_cast<uint32_t>(f.x[1]), uint32_t(kcap::ObjectType::Task),
                      kcap::kWrite, audit::Outcome::Deny, static_cast<int32_t>(target.error()));
        return err(target.error());
    }
    uint32_t rights = static_cast<uint32_t>(f.x[2]);
    if ((rights & object.rights) != rights || rights == 0)
        return err(ktl::Error::AccessDenied); // never more than the issuer holds
    // Derived from the issuer's capability: revoking (or deleting) it reaches the token and
    // what the token becomes when redeemed.
    auto tok = kcap::issue_token(self, static_cast<uint32_t>(f.x[0]), static_cast<sched::Task*>(target->object), rights,
                                 clock::monotonic_ns() + valid_ns, f.x[3]);
    return tok ? static_cast<int64_t>(*tok) : err(tok.error());
}

int64_t task_create(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t fn = f.x[1], arg = f.x[2], priority = f.x[3], name_ptr = f.x[4];
    char name[sched::kNameMax + 1] = "task";
    if (name_ptr) {
        if (!buffers::readable(name_ptr, 1))
            return err(ktl::Error::InvalidArgs);
        const char* src = reinterpret_cast<const char*>(name_ptr);
        size_t n = 0;
        for (; n < sched::kNameMax && buffers::readable(name_ptr + n, 1) && src[n]; ++n)
            name[n] = src[n];
        name[n] = '\0';
    }
    // Tasks run kernel code: the entry must be in kernel text.
    if (!fn || priority == 0 || priority >= sched::kPriorities || !buffers::is_kernel_text(fn))
        return err(ktl::Error::InvalidArgs);
    sched::Task* self = sched::current();
    if (priority > self->priority)
        return err(ktl::Error::AccessDenied); // no creating tasks above one's own priority
    auto task = sched::create(name, reinterpret_cast<sched::TaskFn>(fn), reinterpret_cast<void*>(arg),
                              sched::CreateOptions { static_cast<uint8_t>(priority), false });
    if (!task)
        return err(task.error());
    auto slot = kcap::create_and_grant(self, kcap::ObjectType::Task, *task, kcap::kRead | kcap::kWrite | kcap::kGrant, 0,
                                       &(*task)->cap_object);
    if (!slot)
        return err(slot.error()); // the task runs anyway; it just cannot be joined
    return *slot;
}

} // namespace handlers

namespace handlers {

// The holder of a task's Write right may stop it: the MCP bridge ends a tool task that runs
// past its wall-time limit without checking it.
int64_t task_kill(arch::TrapFrame&, const kcap::Resolved& object) {
    auto r = sched::kill(static_cast<sched::Task*>(object.object), "killed by its creator");
    return r ? (*r ? 1 : 0) : err(r.error());
}

int64_t task_limit(arch::TrapFrame& f, const kcap::Resolved& object) {
    auto* task = static_cast<sched::Task*>(object.object);
    if (task->state == sched::TaskState::Dead)
        return err(ktl::Error::BadHandle);
    kheap::set_limit(static_cast<uint16_t>(task->id), f.x[1]);
    task->syscall_budget = f.x[2];
    return 0;
}

int64_t random_bytes(arch::TrapFrame& f, const kcap::Resolved&) {
    constexpr uint64_t kMaxRequest = 256;
    if (f.x[1] == 0 || f.x[1] > kMaxRequest || !buffers::writable(f.x[0], f.x[1]))
        return err(ktl::Error::InvalidArgs);
    rng::fill(reinterpret_cast<void*>(f.x[0]), f.x[1]);
    return static_cast<int64_t>(f.x[1]);
}

int64_t task_status(arch::TrapFrame&, const kcap::Resolved& object) {
    return sched::ended(static_cast<const sched::Task*>(object.object)) ? 1 : 0;
}

int64_t task_detach(arch::TrapFrame&, const kcap::Resolved& object) {
    auto* task = static_cast<sched::Task*>(object.object);
    if (task == sched::current() || task->detached)
        return err(ktl::Error::InvalidArgs);
    sched::detach(task);
    return 0;
}

} // namespace handlers

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

int64_t yield(const kcap::Resolved&) {
    sched::yield_current();
    return 0;
}

int64_t exit(const kcap::Resolved&, int64_t code) {
    sched::exit_current(code, "exit");
    return kBlocked;
}

int64_t sleep(const kcap::Resolved&, uint64_t ns) {
    if (ns == 0) {
        sched::yield_current();
        return 0;
    }
    if (ns > 3600ull * 1000000000ull)
        return err(ktl::Error::InvalidArgs);
    sched::sleep_current(clock::monotonic_ns() + ns);
    return kBlocked;
}

int64_t clock(const kcap::Resolved&) { return static_cast<int64_t>(clock::monotonic_ns()); }

int64_t task_self(const kcap::Resolved&) { return sched::current()->id; }

int64_t task_join(const kcap::Resolved& object, Cap, uint64_t timeout_ns) {
    auto* task = static_cast<sched::Task*>(object.object);
    int64_t code = 0;
    auto r = sched::join(task->id, code, deadline_after(timeout_ns));
    if (!r)
        return err(r.error());
    return *r ? code : kBlocked;
}

int64_t cap_mint(const kcap::Resolved&, Cap cap, uint32_t rights, uint64_t badge) {
    auto r = kcap::mint(sched::current(), cap, rights, badge);
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t cap_grant(const kcap::Resolved&, Cap cap, uint32_t rights, uint64_t badge, Cap task) {
    sched::Task* self = sched::current();
    auto target = kcap::lookup(self, task, kcap::ObjectType::Task, kcap::kWrite);
    if (!target) {
        audit::record(uint32_t(sys::Number::cap_grant), task, uint32_t(kcap::ObjectType::Task), kcap::kWrite,
                      audit::Outcome::Deny, static_cast<int32_t>(target.error()));
        return err(target.error());
    }
    auto* dst = static_cast<sched::Task*>(target->object);
    if (dst->state == sched::TaskState::Dead)
        return err(ktl::Error::BadHandle);
    auto r = kcap::mint_into(self, cap, dst, rights, badge);
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t cap_revoke(const kcap::Resolved&, Cap cap) {
    auto r = kcap::revoke(sched::current(), cap);
    return r ? 0 : err(r.error());
}

int64_t cap_delete(const kcap::Resolved&, Cap slot) {
    auto r = kcap::remove(sched::current(), slot);
    return r ? 0 : err(r.error());
}

int64_t token_redeem(const kcap::Resolved&, Cap slot, uint64_t binding) {
    bool kept = false;
    auto r = kcap::redeem(sched::current(), slot, clock::monotonic_ns(), binding, &kept);
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
int64_t token_issue(const kcap::Resolved& object, Cap cap, Cap task, uint32_t rights, uint64_t binding,
                    uint64_t valid_ns) {
    constexpr uint64_t kMaxValidNs = 60'000'000'000ull;
    if (valid_ns == 0 || valid_ns > kMaxValidNs)
        return err(ktl::Error::InvalidArgs);
    sched::Task* self = sched::current();
    auto target = kcap::lookup(self, task, kcap::ObjectType::Task, kcap::kWrite);
    if (!target) {
        audit::record(uint32_t(sys::Number::token_issue), task, uint32_t(kcap::ObjectType::Task), kcap::kWrite,
                      audit::Outcome::Deny, static_cast<int32_t>(target.error()));
        return err(target.error());
    }
    if ((rights & object.rights) != rights || rights == 0)
        return err(ktl::Error::AccessDenied); // never more than the issuer holds
    // Derived from the issuer's capability: revoking (or deleting) it reaches the token and
    // what the token becomes when redeemed.
    auto tok = kcap::issue_token(self, cap, static_cast<sched::Task*>(target->object), rights,
                                 clock::monotonic_ns() + valid_ns, binding);
    return tok ? static_cast<int64_t>(*tok) : err(tok.error());
}

int64_t task_create(const kcap::Resolved&, Cap, abi::TaskEntry fn, void* arg, uint64_t priority, const char* src) {
    char name[sched::kNameMax + 1] = "task";
    if (src) {
        if (!buffers::readable(src, 1))
            return err(ktl::Error::InvalidArgs);
        size_t n = 0;
        for (; n < sched::kNameMax && buffers::readable(src + n, 1) && src[n]; ++n)
            name[n] = src[n];
        name[n] = '\0';
    }
    // Tasks run kernel code: the entry must be in kernel text.
    if (!fn || priority == 0 || priority >= sched::kPriorities || !buffers::is_kernel_text(fn))
        return err(ktl::Error::InvalidArgs);
    sched::Task* self = sched::current();
    if (priority > self->priority)
        return err(ktl::Error::AccessDenied); // no creating tasks above one's own priority
    auto task = sched::create(name, fn, arg, sched::CreateOptions { static_cast<uint8_t>(priority), false });
    if (!task)
        return err(task.error());
    auto slot = kcap::create_and_grant(self, kcap::ObjectType::Task, *task, kcap::kRead | kcap::kWrite | kcap::kGrant,
                                       0, &(*task)->cap_object);
    if (!slot)
        return err(slot.error()); // the task runs anyway; it just cannot be joined
    return *slot;
}

} // namespace handlers

namespace handlers {

// The holder of a task's Write right may stop it: the MCP bridge ends a tool task that runs
// past its wall-time limit without checking it.
int64_t task_kill(const kcap::Resolved& object, Cap) {
    auto r = sched::kill(static_cast<sched::Task*>(object.object), "killed by its creator");
    return r ? (*r ? 1 : 0) : err(r.error());
}

int64_t task_limit(const kcap::Resolved& object, Cap, uint64_t heap_bytes, uint64_t max_syscalls, uint64_t flags) {
    auto* task = static_cast<sched::Task*>(object.object);
    if (task->state == sched::TaskState::Dead)
        return err(ktl::Error::BadHandle);
    if ((flags & ~abi::kTaskFlagsKnown) != 0)
        return err(ktl::Error::InvalidArgs);
    kheap::set_limit(static_cast<uint16_t>(task->id), heap_bytes);
    task->syscall_budget = max_syscalls;
    task->ack_staged = (flags & abi::kTaskAckStaged) != 0;
    return 0;
}

int64_t random_bytes(const kcap::Resolved&, void* out, uint64_t length) {
    constexpr uint64_t kMaxRequest = 256;
    if (length == 0 || length > kMaxRequest || !buffers::writable(out, length))
        return err(ktl::Error::InvalidArgs);
    rng::fill(out, length);
    return static_cast<int64_t>(length);
}

int64_t task_status(const kcap::Resolved& object, Cap) {
    return sched::ended(static_cast<const sched::Task*>(object.object)) ? 1 : 0;
}

int64_t task_detach(const kcap::Resolved& object, Cap) {
    auto* task = static_cast<sched::Task*>(object.object);
    if (task == sched::current() || task->detached)
        return err(ktl::Error::InvalidArgs);
    sched::detach(task);
    return 0;
}

} // namespace handlers

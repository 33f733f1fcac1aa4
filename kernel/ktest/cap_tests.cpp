// Capability tests through the system-call door: refusals are specific and audited, rights
// never grow, revoke is transitive, and single-use execution tokens work exactly once.
#include "../audit/syscall_log.h"
#include "../cap/kcap.h"
#include "../sched/scheduler.h"
#include "cases.h"

namespace ktest {
namespace {

// Finds the newest audit record for (syscall, slot); false if none since `from`.
bool audited(const Caps& caps, uint64_t from, sys::Number syscall, uint32_t slot, audit::Record& out) {
    bool found = false;
    for (uint64_t seq = from; seq < from + 256; ++seq) {
        audit::Record r {};
        int64_t next = sys::audit_read(caps.audit, seq, &r);
        if (next < 0)
            break;
        if (r.syscall == uint32_t(syscall) && r.slot == slot) {
            out = r;
            found = true;
        }
    }
    return found;
}

int64_t unprivileged(void*) {
    // This task holds no Factory capability: creating anything must be refused.
    return sys::sem_create(0, 0, 1);
}

} // namespace

bool caps_refused(const Caps& caps) {
    uint64_t from = audit::next_seq();
    // An empty slot.
    int64_t r = sys::sem_post(60);
    KT_CHECK(r == -int64_t(ktl::Error::BadHandle), "empty slot -> %lld", (long long)r);
    audit::Record rec {};
    KT_CHECK(audited(caps, from, sys::Number::sem_post, 60, rec), "no audit record for the empty-slot refusal");
    KT_CHECK(rec.outcome == audit::Outcome::Deny && rec.error == int32_t(ktl::Error::BadHandle), "audit outcome");

    // Wrong type: a semaphore capability presented to a queue call.
    int64_t sem = sys::sem_create(caps.factory, 0, 4);
    KT_CHECK(sem >= 0, "sem_create");
    uint64_t buf = 0;
    r = sys::queue_send(sem, &buf, 8, 0);
    KT_CHECK(r < 0, "a semaphore must not work as a queue (%lld)", (long long)r);

    // Insufficient rights: a read-only derivative cannot post.
    int64_t ro = sys::cap_mint(sem, uint32_t(cap::Rights::Read), 0);
    KT_CHECK(ro >= 0, "mint read-only %lld", (long long)ro);
    r = sys::sem_post(ro);
    KT_CHECK(r == -int64_t(ktl::Error::AccessDenied), "read-only post -> %lld", (long long)r);
    KT_CHECK(audited(caps, from, sys::Number::sem_post, uint32_t(ro), rec) && rec.rights == kcap::kWrite &&
                 rec.error == int32_t(ktl::Error::AccessDenied),
             "rights refusal not audited with the rights wanted");
    // No escalation: minting from the read-only copy cannot add Write (and it lacks Grant).
    r = sys::cap_mint(ro, 0x1f, 0);
    KT_CHECK(r < 0, "minting from a cap without Grant succeeded");

    // Revoke is transitive: child and grandchild die, the original stays.
    int64_t child = sys::cap_mint(sem, 0x1f, 7);
    int64_t grandchild = child >= 0 ? sys::cap_mint(child, uint32_t(cap::Rights::Write), 0) : -1;
    KT_CHECK(child >= 0 && grandchild >= 0, "mint chain %lld %lld", (long long)child, (long long)grandchild);
    KT_CHECK(sys::sem_post(grandchild) == 0, "grandchild works before revoke");
    KT_CHECK(sys::cap_revoke(sem) == 0, "revoke");
    KT_CHECK(sys::sem_post(grandchild) == -int64_t(ktl::Error::BadHandle), "grandchild survived");
    KT_CHECK(sys::sem_post(child) == -int64_t(ktl::Error::BadHandle), "child survived");
    KT_CHECK(sys::sem_post(sem) == 0, "the original must survive its revoke");

    // A task without the Factory capability is refused, and the audit names it.
    int64_t t = spawn(caps, "unprivileged", unprivileged, nullptr, 10);
    KT_CHECK(t >= 0, "spawn");
    int64_t code = join(static_cast<uint32_t>(t));
    KT_CHECK(code == -int64_t(ktl::Error::BadHandle), "unprivileged sem_create -> %lld", (long long)code);
    KT_CHECK(audited(caps, from, sys::Number::sem_create, 0, rec), "unprivileged refusal not audited");
    KT_CHECK(rec.task_name[0] == 'u', "audit names task '%s'", rec.task_name);

    // Introspection needs its capability too.
    KT_CHECK(sys::task_list(caps.factory, nullptr, 0) < 0, "task_list with a factory capability");
    console::printf("ktest:   refusals: empty slot, wrong type, missing rights, no factory; all audited; revoke "
                    "transitive\n");
    return true;
}

int64_t token_holder(void*) { return 0; }

// What a tool task does with an issued token: redeem it, use it, try it again, then wait until
// the issuer has revoked its capability and use it once more.
struct Redeemer {
    uint32_t token = 0;
    uint64_t binding = 0;
    int64_t first = -1, post = -1, second = 0, after_revoke = 0;
    volatile bool revoked = false;
} g_redeemer;

int64_t redeemer(void*) {
    Redeemer& r = g_redeemer;
    r.first = sys::token_redeem(r.token, r.binding);
    r.post = sys::sem_post(r.first);
    r.second = sys::token_redeem(r.token, r.binding);
    for (int i = 0; i < 200 && !r.revoked; ++i)
        sys::sleep_ns(1000000);
    r.after_revoke = sys::sem_post(r.first);
    return 0;
}

bool exec_token(const Caps& caps) {
    sched::Task* self = sched::current();
    int64_t sem = sys::sem_create(caps.factory, 0, 8);
    KT_CHECK(sem >= 0, "sem_create");
    kcap::CapInfo infos[64];
    uint32_t n = kcap::list(self, infos, 64);
    uint64_t object = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (infos[i].slot == uint32_t(sem))
            object = infos[i].object_id;
    KT_CHECK(object != 0, "semaphore object id");
    uint64_t now = sys::clock_ns();
    constexpr uint64_t kBinding = 0x5eedf00dull;

    // Issued (token_issue) from a capability of mine into a task: the first redeem turns the token,
    // in its own slot, into a capability that works; the second finds no token there (consumed,
    // not merely refused); revoking my capability reaches what the token became.
    int64_t issuer = sys::cap_mint(sem, kcap::kWrite | kcap::kGrant | kcap::kRevoke, 0);
    KT_CHECK(issuer >= 0, "cap_mint issuer");
    int64_t holder = sys::task_create(caps.factory, &redeemer, nullptr, 1, "redeemer");
    KT_CHECK(holder >= 0, "task_create");
    g_redeemer = Redeemer {};
    g_redeemer.binding = kBinding;
    int64_t issued = sys::token_issue(issuer, holder, kcap::kWrite, kBinding, 1000 * kMs);
    KT_CHECK(issued >= 0, "token_issue -> %lld", (long long)issued);
    g_redeemer.token = static_cast<uint32_t>(issued);
    for (int i = 0; i < 200 && g_redeemer.second == 0; ++i)
        sys::sleep_ns(kMs);
    KT_CHECK(g_redeemer.first == issued, "the token became a capability in its own slot (%lld, token %lld)",
             (long long)g_redeemer.first, (long long)issued);
    KT_CHECK(g_redeemer.post == 0, "the redeemed capability works");
    KT_CHECK(g_redeemer.second == -int64_t(ktl::Error::InvalidArgs),
             "second redeem -> %lld: the token must be consumed", (long long)g_redeemer.second);
    KT_CHECK(sys::cap_revoke(issuer) == 0, "revoke the issuer's capability");
    g_redeemer.revoked = true;
    KT_CHECK(join(static_cast<uint32_t>(holder), 1000 * kMs) == 0, "redeemer ended");
    KT_CHECK(g_redeemer.after_revoke == -int64_t(ktl::Error::BadHandle), "after the issuer's revoke -> %lld",
             (long long)g_redeemer.after_revoke);
    sys::cap_delete(issuer);

    // Kernel-minted root tokens: the first redeem works and grants the token's rights only.
    auto tok = kcap::mint_token(self, object, kcap::kWrite, 42, now + 1000 * kMs, kBinding);
    KT_CHECK(tok.ok(), "mint_token");
    int64_t granted = sys::token_redeem(*tok, kBinding);
    KT_CHECK(granted >= 0, "first redeem -> %lld", (long long)granted);
    KT_CHECK(sys::sem_post(granted) == 0, "the redeemed capability works");
    KT_CHECK(sys::cap_mint(granted, kcap::kWrite, 0) < 0, "and only the token's rights (no grant)");
    sys::cap_delete(granted);

    // Wrong binding: refused, and the token is gone (fail-closed).
    auto stolen = kcap::mint_token(self, object, kcap::kWrite, 43, now + 1000 * kMs, kBinding);
    KT_CHECK(stolen.ok(), "mint_token");
    KT_CHECK(sys::token_redeem(*stolen, kBinding + 1) == -int64_t(ktl::Error::AccessDenied),
             "binding mismatch must be refused");
    KT_CHECK(sys::token_redeem(*stolen, kBinding) < 0, "a refused token must be consumed");

    // Expiry.
    auto late = kcap::mint_token(self, object, kcap::kWrite, 44, sys::clock_ns() + 30 * kMs, kBinding);
    KT_CHECK(late.ok(), "mint_token");
    sys::sleep_ns(60 * kMs);
    int64_t expired = sys::token_redeem(*late, kBinding);
    KT_CHECK(expired == -int64_t(ktl::Error::TimedOut), "expired redeem -> %lld", (long long)expired);

    // Tokens cannot be used as ordinary capabilities either.
    auto direct = kcap::mint_token(self, object, kcap::kWrite, 45, sys::clock_ns() + 1000 * kMs, kBinding);
    KT_CHECK(direct.ok(), "mint_token");
    KT_CHECK(sys::sem_post(*direct) < 0, "a token worked as a plain capability");
    // Issued through the system call: into another task's table, never above what is held.
    int64_t task = sys::task_create(caps.factory, &token_holder, nullptr, 1, "token-holder");
    KT_CHECK(task >= 0, "task_create");
    int64_t limited = sys::cap_mint(sem, kcap::kWrite | kcap::kGrant, 0);
    KT_CHECK(limited >= 0, "cap_mint");
    KT_CHECK(sys::token_issue(limited, task, kcap::kRead, kBinding, 1000 * kMs) == -int64_t(ktl::Error::AccessDenied),
             "a token above the issuer's rights");
    KT_CHECK(sys::token_issue(limited, task, kcap::kWrite, kBinding, 1000 * kMs) >= 0, "token_issue");
    KT_CHECK(sys::token_issue(sem, limited, kcap::kWrite, kBinding, 1000 * kMs) < 0, "the target must be a task");
    console::printf("ktest:   token: once ok, consumed by the first redeem, revoked with its issuer, wrong binding "
                    "refused and consumed, expiry refused\n");
    return true;
}

} // namespace ktest

#include "dispatch.h"

#include "../audit/syscall_log.h"
#include "../cap/kcap.h"
#include "../clock.h"
#include "../console.h"
#include "../sched/scheduler.h"
#include "handlers.h"
#include "sys.h"

namespace syscall {
namespace {

using Handler = int64_t (*)(arch::TrapFrame& frame, const kcap::Resolved& object);

struct Entry {
    const char* name;
    kcap::ObjectType type; // None: a0 is not a capability
    bool any_type;         // a0 is a capability of any type
    uint32_t rights;
    Handler handler;
    const char* doc;
};

// Names usable in syscalls.def's type column.
namespace types {
using enum cap::ObjectType;
constexpr cap::ObjectType Any = cap::ObjectType::None;
} // namespace types
constexpr bool is_any(const char* s) { return s[0] == 'A' && s[1] == 'n' && s[2] == 'y' && s[3] == 0; }

using kcap::kCreate;
using kcap::kDrop;
using kcap::kExecute;
using kcap::kGrant;
using kcap::kImport;
using kcap::kRead;
using kcap::kRevoke;
using kcap::kWrite;

constexpr Entry kTable[] = {
#define SYSCALL(nr, name, type, rights, args, doc) \
    { #name, types::type, is_any(#type), rights, decode::Invoke<abi::signature::name, handlers::name>::run, doc },
#include <abi/syscalls.def>
#undef SYSCALL
};
constexpr uint64_t kCount = sizeof(kTable) / sizeof(kTable[0]);

// Numbers are dense and in order: the table index is the syscall number.
constexpr bool numbers_are_dense() {
    uint64_t expected = 0;
#define SYSCALL(nr, name, type, rights, args, doc) \
    if (nr != expected++) \
        return false;
#include <abi/syscalls.def>
#undef SYSCALL
    return true;
}
static_assert(numbers_are_dense(), "syscalls.def numbers must be 0, 1, 2, ... in order");

uint64_t g_counts[kCount] = {};

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

// Calls without effects outside the task, allowed past a spent budget: a task must still be able
// to learn who it is, give up the CPU and end.
constexpr bool outside_budget(uint64_t nr) {
    using sys::Number;
    return nr == uint64_t(Number::yield) || nr == uint64_t(Number::exit) || nr == uint64_t(Number::clock) ||
           nr == uint64_t(Number::task_self);
}

// Counts the call against the caller's budget; false once it is used up. Sleep counts (and marks
// the budget spent) but is still carried out past it: a loop that sleeps until it is told to stop
// must wait, not spin on a sleep that fails at once.
bool within_budget(uint64_t nr) {
    sched::Task* self = sched::current();
    if (!self || self->syscall_budget == 0 || outside_budget(nr))
        return true;
    if (self->syscalls >= self->syscall_budget) {
        self->budget_spent = true;
        return nr == uint64_t(sys::Number::sleep);
    }
    ++self->syscalls;
    return true;
}

} // namespace

void dispatch(arch::TrapFrame& frame) {
    uint64_t nr = frame.x[8];
    if (nr >= kCount) {
        frame.x[0] = static_cast<uint64_t>(err(ktl::Error::Unsupported));
        return;
    }
    const Entry& e = kTable[nr];
    ++g_counts[nr];
    if (!within_budget(nr)) {
        frame.x[0] = static_cast<uint64_t>(err(ktl::Error::Exhausted));
        return;
    }
    kcap::Resolved object {};
    bool takes_cap = e.type != kcap::ObjectType::None || e.any_type;
    if (takes_cap) {
        uint32_t slot = static_cast<uint32_t>(frame.x[0]);
        auto r = kcap::lookup(sched::current(), slot, e.type, e.rights);
        if (!r) {
            audit::record(static_cast<uint32_t>(nr), slot, static_cast<uint32_t>(e.type), e.rights,
                          audit::Outcome::Deny, static_cast<int32_t>(r.error()));
            frame.x[0] = static_cast<uint64_t>(err(r.error()));
            return;
        }
        object = *r;
    }
    int64_t result = e.handler(frame, object);
    if (result != handlers::kBlocked)
        frame.x[0] = static_cast<uint64_t>(result);
}

const char* name(uint64_t number) { return number < kCount ? kTable[number].name : "?"; }
uint64_t count(uint64_t number) { return number < kCount ? g_counts[number] : 0; }

void print_table() {
    console::printf("  nr  name           capability      rights  description\n");
    for (uint64_t i = 0; i < kCount; ++i) {
        const Entry& e = kTable[i];
        char rights[8] = "-----";
        const char letters[] = "rwxgv";
        for (int b = 0; b < 5; ++b)
            if (e.rights & (1u << b))
                rights[b] = letters[b];
        const char* type = e.any_type ? "any" : e.type == kcap::ObjectType::None ? "-" : kcap::type_name(e.type);
        console::printf("  %-3llu %-14s %-15s %-7s %s\n", static_cast<unsigned long long>(i), e.name, type,
                        e.rights ? rights : "-", e.doc);
    }
}

} // namespace syscall

namespace sys {

bool budget_spent() {
    sched::Task* self = sched::current();
    return self && self->budget_spent;
}

} // namespace sys

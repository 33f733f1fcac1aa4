#include "replication_desk.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../mm/kheap.h"
#include "../sched/scheduler.h"

#include <cstring>

namespace replication {
namespace {

enum class State : uint8_t { Free, Reserved, Queued, Taken };

struct Slot {
    State state = State::Free;
    uint64_t ticket = 0;
    size_t length = 0;            // the command's
    std::byte* command = nullptr; // kMaxCommand, from the kernel heap while in use
    sched::WaitQueue caller;
    DeleteAnswer answer; // a delete's: where its caller wants the absent flags
};

Slot g_slots[kSlots];
const sched::Task* g_applier = nullptr;
uint32_t g_voters = 0;
uint64_t g_origin = 0;
Role g_role = Role::NoLeader;
uint64_t g_next_ticket = 0;
void (*g_wake)() = nullptr;

void put_le(std::byte* p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i)
        p[i] = std::byte(v >> (8 * i));
}

Slot* slot_of(std::span<std::byte> command) {
    for (auto& s : g_slots)
        if (s.command == command.data())
            return &s;
    return nullptr;
}

void free_slot(Slot& s) {
    if (s.command)
        kheap::free(s.command);
    s = Slot {};
}

} // namespace

void set_applier(const sched::Task* task, uint32_t voters, uint64_t origin) {
    arch::IrqGuard guard;
    g_applier = task;
    g_voters = voters;
    g_origin = origin;
}

void set_wake(void (*wake)()) {
    arch::IrqGuard guard;
    g_wake = wake;
}

bool is_applier(const sched::Task* task) {
    arch::IrqGuard guard;
    return task && task == g_applier;
}

bool has_applier() {
    arch::IrqGuard guard;
    return g_applier != nullptr;
}

uint32_t voters() {
    arch::IrqGuard guard;
    return g_applier ? g_voters : 0;
}

void set_role(Role role) {
    arch::IrqGuard guard;
    g_role = role;
}

namespace detail {

std::span<std::byte> reserve(storage::RecordType type, size_t bytes, ktl::Error& refused) {
    if (bytes == 0 || bytes > kMaxRecord) {
        refused = ktl::Error::InvalidArgs;
        return {};
    }
    Slot* slot = nullptr;
    {
        arch::IrqGuard guard;
        if (!g_applier) {
            refused = ktl::Error::NotReady;
            return {};
        }
        // A node outside group 0's voters (a spare, or a voter replaced while it was down) knows no
        // leader of it: with groups of their own its applier sends what it takes to the
        // collection's group (it may be one of its voters), to the collection's voters (it holds
        // no copy), or, a placement, to the member that last told it the directory, and refuses
        // what none of those can take; without them (raft_groups=0) everything is group 0's.
        if (g_voters == 0 && !bootargs::get().raft_groups) {
            refused = ktl::Error::NotVoter;
            return {};
        }
        if (g_voters != 0 && g_role == Role::NoLeader) {
            refused = ktl::Error::NotLeader;
            return {};
        }
        for (auto& s : g_slots)
            if (s.state == State::Free) {
                slot = &s;
                break;
            }
        if (!slot) {
            refused = ktl::Error::WouldBlock;
            return {};
        }
        slot->state = State::Reserved;
        slot->ticket = ++g_next_ticket;
    }
    auto mem = kheap::alloc(kCommandHeader + bytes);
    arch::IrqGuard guard;
    if (!mem) {
        free_slot(*slot);
        refused = ktl::Error::NoMemory;
        return {};
    }
    slot->command = static_cast<std::byte*>(*mem);
    slot->length = kCommandHeader + bytes;
    std::byte* h = slot->command;
    put_le(h + abi::repl::kOriginAt, g_origin, 8);
    put_le(h + abi::repl::kTicketAt, slot->ticket, 8);
    put_le(h + abi::repl::kTypeAt, static_cast<uint16_t>(type), 2);
    put_le(h + abi::repl::kZeroAt, 0, 2);
    put_le(h + abi::repl::kLengthAt, bytes, 4);
    return { slot->command, slot->length };
}

ipc::Outcome queue(std::span<std::byte> command, DeleteAnswer answer, uint64_t deadline_ns) {
    arch::IrqGuard guard;
    Slot* s = slot_of(command);
    if (!s)
        return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) };
    s->state = State::Queued;
    s->answer = answer;
    if (g_wake)
        g_wake();
    sched::block_current(s->caller, deadline_ns);
    return { true, 0 };
}

void release(std::span<std::byte> command) {
    arch::IrqGuard guard;
    if (Slot* s = slot_of(command))
        free_slot(*s);
}

} // namespace detail

int64_t take(std::span<std::byte> out) {
    arch::IrqGuard guard;
    Slot* oldest = nullptr;
    for (auto& s : g_slots)
        if (s.state == State::Queued && (!oldest || s.ticket < oldest->ticket))
            oldest = &s;
    if (!oldest)
        return 0;
    if (out.size() < oldest->length)
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    std::memcpy(out.data(), oldest->command, oldest->length);
    oldest->state = State::Taken;
    return static_cast<int64_t>(oldest->length);
}

void done(uint64_t ticket, int64_t result, std::span<const bool> absent) {
    arch::IrqGuard guard;
    for (auto& s : g_slots)
        if (s.state == State::Taken && s.ticket == ticket) {
            // The caller's flags buffer is its own, checked when it asked, and written only while
            // it is still queued on this call (a killed caller stays queued until woken, so its
            // memory is alive; one whose deadline passed has left the queue: nothing is written).
            // A caller that left: nobody is woken, the slot is freed.
            if (!s.caller.empty() && result >= 0) {
                for (uint32_t i = 0; i < s.answer.count && i < absent.size(); ++i)
                    s.answer.absent[i] = absent[i];
                if (s.answer.single) // (one id: found, or not, as an unreplicated delete answers)
                    result = result > 0 ? 0 : -static_cast<int64_t>(ktl::Error::NotFound);
            }
            sched::wake_one(s.caller, result);
            free_slot(s);
            return;
        }
}

} // namespace replication

#pragma once
// Where a change to a replicated collection waits for the cluster's consensus group (issue 35;
// docs/replication.md). A replicated collection is changed only through the group: a caller's
// create, upsert, delete or drop of one is not applied where it is made; the store's system call
// encodes it as the store's own record (lib/storage/records.h), leaves it here as a command and
// blocks the caller. The cluster task (the applier) takes each command (repl_take), proposes it
// to the group, and, once the group has committed it, applies it on every voter through the
// store's ordinary calls; the voter that took it answers the blocked caller with the result it
// got (repl_done). Exception context (IRQs masked inside), like the store's handlers.
// A command's layout is abi/replication.h's.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <abi/replication.h>
#include <ktl/result.h>
#include <storage/records.h>

#include "../ipc/sync.h"
#include "../sched/task.h"

namespace replication {

constexpr size_t kCommandHeader = abi::repl::kHeader;
// (The engine's messages carry at most three commands: kernel/raft's 64 KiB message bound.)
constexpr size_t kMaxCommand = abi::repl::kMaxCommand;
constexpr size_t kMaxRecord = kMaxCommand - kCommandHeader;
constexpr size_t kSlots = 16; // changes waiting or in the group at once
// vec_sync's and store_sync's read barrier.
constexpr uint16_t kReadBarrier = abi::repl::kReadBarrier;

// The cluster task, once its member runs: the task whose store calls are applied, not redirected.
// `voters`: the group's size (what `replicas` must name); `origin`: this node's address.
void set_applier(const sched::Task* task, uint32_t voters, uint64_t origin);
bool is_applier(const sched::Task* task);
// How the applier's task is woken when a change or a read is queued (it waits on the node's UDP
// endpoints: without it, the next round of its own finds the change).
void set_wake(void (*wake)());
bool has_applier(); // a task registered (as a voter or not)
uint32_t voters();  // 0: no consensus group runs here
// The member's role, published by the applier each round: a change is taken at the leader, and
// at a follower that knows one (it forwards the change there); refused while no leader is known.
enum class Role : uint8_t { NoLeader = 0, Leader = 1, Follower = 2 };
void set_role(Role role);

// A change to a replicated collection by the calling task: `encode` writes the record (exactly
// `bytes`) of `type` into the span it is given. Blocks the caller until the change is applied here
// or refused; at once -NotReady (no group), -NotLeader (no leader of group 0 known, at a voter of
// it; a node outside its voters hands its changes to the applier, which routes or refuses them),
// -WouldBlock (every slot taken),
// -InvalidArgs (over kMaxRecord).
// A delete's caller may pass its `absent` flags (one per id, the caller's own buffer, checked
// writable): the applier's flags for the ids it did not find are copied there before the caller
// is woken. `single`: a one-id delete, answered 0 or -NotFound as an unreplicated one is.
struct DeleteAnswer {
    bool* absent = nullptr;
    uint32_t count = 0;
    bool single = false;
};
// `deadline_ns` (0: none; never with a DeleteAnswer): the caller stops waiting then (-TimedOut),
// and the change still goes its way (a read barrier only, as store_sync uses it).
template <typename Encode>
ipc::Outcome submit(storage::RecordType type, size_t bytes, Encode&& encode, DeleteAnswer answer = {},
                    uint64_t deadline_ns = 0);

// The applier's side.
int64_t take(std::span<std::byte> out); // a command's length, 0 when none waits
// `absent`: a delete's flags for the ids it did not find (empty for other changes).
void done(uint64_t ticket, int64_t result, std::span<const bool> absent = {});

namespace detail {
// A free slot's command space (the record at kCommandHeader), or empty.
std::span<std::byte> reserve(storage::RecordType type, size_t bytes, ktl::Error& refused);
ipc::Outcome queue(std::span<std::byte> command, DeleteAnswer answer, uint64_t deadline_ns); // blocks the caller
void release(std::span<std::byte> command);
} // namespace detail

template <typename Encode>
ipc::Outcome submit(storage::RecordType type, size_t bytes, Encode&& encode, DeleteAnswer answer,
                    uint64_t deadline_ns) {
    ktl::Error refused = ktl::Error::None;
    std::span<std::byte> command = detail::reserve(type, bytes, refused);
    if (command.empty())
        return { false, -static_cast<int64_t>(refused) };
    if (!encode(command.subspan(kCommandHeader, bytes))) {
        detail::release(command);
        return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) };
    }
    return detail::queue(command, answer, answer.absent ? 0 : deadline_ns);
}

// A read barrier for the collection `name` (vec_sync's, store_sync's): answered 1 once what the
// group committed before it is applied here; `deadline_ns` as for submit().
inline ipc::Outcome read_barrier(std::string_view name, uint64_t deadline_ns = 0) {
    return submit(
        static_cast<storage::RecordType>(kReadBarrier), name.size(),
        [name](std::span<std::byte> out) {
        for (size_t i = 0; i < name.size(); ++i)
            out[i] = std::byte(name[i]);
        return true;
        },
        {}, deadline_ns);
}

} // namespace replication

// Raft system calls: a member's durable state (kernel/raft/raft_store.h), through the RaftLog
// capability (the cluster task writes and reads its groups; the storage task gives recovered
// state back and reads every group for a checkpoint).
#include "../net/datagram.h"
#include "../vector/replication_desk.h"
#include "../raft/raft_store.h"
#include "../sched/scheduler.h"
#include "buffers.h"
#include "handlers.h"

#include <abi/vector.h>

namespace handlers {
namespace {
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
} // namespace

int64_t raft_write(const kcap::Resolved&, Cap, uint64_t kind, const void* payload, uint64_t len) {
    if (kind < uint64_t(raftlog::Kind::Term) || kind > uint64_t(raftlog::kMaxKind) || len == 0 ||
        len > storage::kMaxRaftRecord || !buffers::readable(payload, len))
        return err(ktl::Error::InvalidArgs);
    const raftstore::Written w = raftstore::write(sched::current(), static_cast<raftlog::Kind>(kind),
                                                  { static_cast<const std::byte*>(payload), static_cast<size_t>(len) });
    return w.error == ktl::Error::None ? static_cast<int64_t>(w.ticket) : err(w.error);
}

int64_t raft_read(const kcap::Resolved&, Cap, uint64_t group, void* out, uint64_t len, uint64_t offset) {
    if (len > 0 && (len > (1u << 20) || !buffers::writable(out, len)))
        return err(ktl::Error::InvalidArgs);
    return raftstore::read(group, { static_cast<std::byte*>(out), static_cast<size_t>(len) }, offset);
}

int64_t raft_restore(const kcap::Resolved&, Cap, const void* piece, uint64_t len, uint64_t offset, uint64_t total) {
    if (len > (1u << 20) || (len && !buffers::readable(piece, len)))
        return err(ktl::Error::InvalidArgs);
    const ktl::Error e = raftstore::restore({ static_cast<const std::byte*>(piece), static_cast<size_t>(len) }, offset,
                                            total);
    return e == ktl::Error::None ? 0 : err(e);
}


int64_t repl_serve(const kcap::Resolved&, Cap, uint64_t voters, uint64_t origin) {
    // (0: the applier of a node outside the group's voters, which the store refuses replicated
    // collections' creation as if no group ran; registered again as it becomes a voter.)
    if ((voters != 0 && voters != 3 && voters != 5) || origin == 0)
        return err(ktl::Error::InvalidArgs);
    if (replication::has_applier() && !replication::is_applier(sched::current()))
        return err(ktl::Error::Exists); // one applier per node
    replication::set_applier(sched::current(), static_cast<uint32_t>(voters), origin);
    replication::set_wake(&net::Datagram::wake_waiter); // (the applier waits on the UDP endpoints)
    return 0;
}

int64_t repl_take(const kcap::Resolved&, Cap, void* out, uint64_t len, uint64_t leader) {
    if (len > replication::kMaxCommand * 2 || !buffers::writable(out, len))
        return err(ktl::Error::InvalidArgs);
    if (!replication::is_applier(sched::current()))
        return err(ktl::Error::AccessDenied); // the group's own task, not any holder of the log
    replication::set_role(leader == 1   ? replication::Role::Leader
                          : leader == 2 ? replication::Role::Follower
                                        : replication::Role::NoLeader);
    return replication::take({ static_cast<std::byte*>(out), static_cast<size_t>(len) });
}

int64_t repl_done(const kcap::Resolved&, Cap, uint64_t ticket, int64_t result, const bool* absent, uint64_t count) {
    if (!replication::is_applier(sched::current()))
        return err(ktl::Error::AccessDenied);
    if (count > abi::kMaxDeleteIds || (count && !buffers::readable(absent, count)))
        return err(ktl::Error::InvalidArgs);
    replication::done(ticket, result, { absent, static_cast<size_t>(count) });
    return 0;
}

} // namespace handlers

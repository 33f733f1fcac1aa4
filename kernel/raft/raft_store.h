#pragma once
// The durable state of this node's Raft groups (issue 35; docs/replication.md): one
// raftlog::Images on the kernel heap, the same state the write-ahead log's raft records rebuild.
// A member's record goes through write(): applied here, then staged for the log like every other
// change; recovery gives the logged records back through the same call, and a checkpoint's
// stream through restore(); read() hands out a group's state (to a member starting) or every
// group's (to a checkpoint). Reached through the RaftLog capability's system calls (raft_write,
// raft_read, raft_restore), which run with interrupts masked: nothing here needs a lock.
#include <cstddef>
#include <cstdint>
#include <span>

#include <raft/log_image.h>
#include <raft/log_records.h>
#include <storage/records.h>

namespace sched {
struct Task;
}

namespace raftstore {

// What the record became: `ticket` the commit that carries it (0: nothing to wait for: no disk,
// or a record recovery gave back), or an error: WouldBlock (a checkpoint holds writes back: try
// again), Unsupported (the audit trail is not back yet), NoSpace (the log is full), IoError (the
// journal failed, or recovery refused a record), Corrupt (a record no correct member writes:
// nothing staged), NoMemory, Full (a ninth group), InvalidArgs.
struct Written {
    ktl::Error error;
    uint64_t ticket;
};
Written write(const sched::Task* caller, raftlog::Kind kind, std::span<const std::byte> payload);

// The stream (lib/raft/log_image.h) of `group`, or of every group (raftlog::Images::kAll):
// its size when out is empty, otherwise the bytes of [offset, offset + out.size()) it has.
// -Corrupt once recovery gave back a record or a stream that was refused: no member starts on
// state that is not what it wrote, and write() fails from then on too.
int64_t read(uint64_t group, std::span<std::byte> out, uint64_t offset);

// A checkpoint's stream, in pieces from offset 0 on (total: the whole stream's bytes, at most
// kMaxRestore); once the last piece is in, applied whole. Corrupt for a stream that does not add
// up (nothing of it is kept), InvalidArgs for pieces out of order.
constexpr size_t kMaxRestore = raftlog::kMaxStream;
ktl::Error restore(std::span<const std::byte> piece, uint64_t offset, uint64_t total);

// The kernel heap as a raftlog::Memory (for images kept elsewhere: the in-kernel tests' disks).
raftlog::Memory& kernel_memory();

struct Stats {
    uint32_t groups;
    uint64_t records; // written this boot (recovered ones included)
    uint64_t entries; // in every group's log now
};
Stats stats();

} // namespace raftstore

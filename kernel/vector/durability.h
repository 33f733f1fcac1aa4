#pragma once
// What the vector service needs from the layer that makes its writes durable, and nothing else:
// room for a record, space to encode it into, and a way to answer the blocked caller once the
// record is on the disk. The storage layer's journal provides it (kernel/storage/
// vector_durability.cpp): the service never sees the journal, the storage task or the disk, so
// vector/ includes nothing of kernel/storage while storage/ uses the store's system-call layouts.
// The records themselves are lib/storage's (storage/records.h), shared by the log and its replay.
// Exception context only, like the service.
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>
#include <storage/records.h>

#include "../sched/task.h"

namespace vector::durability {

// True while the storage task itself replays the log: its writes are the log, never logged again.
bool replaying();
// True until recovery is over (the store's replay included): background work waits for it.
bool recovering();
// True while a checkpoint is taken (its pages of each collection must agree).
bool checkpointing();
// Room for a record of `bytes`: None, WouldBlock (no staging room until the storage task takes
// what is staged; it calls vector::kick() then), NoSpace (the log is full), IoError, InvalidArgs.
// A reservation is either staged or given back.
ktl::Error reserve(size_t bytes);
void unreserve(size_t bytes);
// Space for a record of exactly `bytes` from a reservation of `reserved` >= bytes, to encode into
// at once; `ticket` names the commit that will carry it. Empty when the journal failed meanwhile.
// `caller`: the task the record is for (its abi::kTaskAckStaged lets the group wait for its
// bridge's audit record).
std::span<std::byte> stage(storage::RecordType type, size_t bytes, size_t reserved, uint64_t& ticket,
                           const sched::Task* caller);
// Wakes the task blocked on `caller` with `result` once commit `ticket` is durable (-IoError if it
// fails), then frees `heap` (kheap; may be null); at once for a caller whose creator syncs
// (abi::kTaskAckStaged).
void defer(sched::WaitQueue& caller, int64_t result, void* heap, uint64_t ticket);
// The ticket the answer of an import just noted waits for (its snapshot must be in a checkpoint
// first); 0: none (no disk, or nothing noted): answer at once.
uint64_t take_import_ticket();

} // namespace vector::durability

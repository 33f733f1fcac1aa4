#pragma once
// A replicated change as it travels between the store's desk (kernel/vector/replication_desk.h)
// and the cluster task's applier: out of repl_take, in the consensus group's log and on the
// forwarding channel to the leader. Little-endian:
//   0 u64 origin (the taking node's IPv4 address and boot) | 8 u64 ticket | 16 u16 record type |
//   18 u16 0 | 20 u32 length | 24 the store's record (lib/storage/records.h), `length` bytes.
// The applier knows a command of its own by its origin.
#include <cstddef>
#include <cstdint>

namespace abi::repl {

constexpr size_t kOriginAt = 0;
constexpr size_t kTicketAt = 8;
constexpr size_t kTypeAt = 16;
constexpr size_t kZeroAt = 18;
constexpr size_t kLengthAt = 20;
constexpr size_t kHeader = 24;
// The largest command (a record of 20 KiB at most: a tool's upsert chunk is 16 KiB of floats).
constexpr size_t kMaxCommand = 20 * 1024;
// A command that changes nothing (its record: the collection's name): applied at a node, it tells
// the caller that every change committed before it is applied there too (a read barrier).
constexpr uint16_t kReadBarrier = 0x100;

} // namespace abi::repl

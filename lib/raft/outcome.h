#pragma once
// The answer to a change made at a node that holds no copy of its collection (issue 35;
// docs/replication.md, "Changes from outside a group"). Such a node carries the change to one of
// the collection's voters; the group commits and applies it, and its leader, which applied it too,
// tells the node that made it how it went with this message (on group 0's forwarding channel: the
// node runs no member of the collection's group). Little-endian, the replication desk's command
// header first, so the channel that carries changes and read-index messages carries it too:
//   u64 origin | u64 ticket | u16 kOutcome | u16 0 | u32 length | i64 result | u32 leader |
//   u32 count | ceil(count / 8) bytes: bit i set when the delete's id i was not there
// `origin` and `ticket` are the change's own (the node knows its callers by them); `leader` is the
// address of the group's leader that answered (where the node sends the collection's next change).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace raftout {

constexpr uint16_t kOutcome = 0x106; // (after raftread's types; never a store record's)
constexpr size_t kHeader = 24;
constexpr size_t kBody = 16;         // result, leader, count
constexpr uint32_t kMaxFlags = 4096; // a delete's ids (abi::kMaxDeleteIds)
constexpr size_t kMaxBytes = kHeader + kBody + kMaxFlags / 8;

struct Outcome {
    uint64_t origin = 0, ticket = 0;
    int64_t result = 0;
    uint32_t leader = 0;
    std::span<const bool> absent; // a delete's flags (empty for other changes)
};

// Bytes of the message for `count` flags.
constexpr size_t bytes(uint32_t count) { return kHeader + kBody + (count + 7) / 8; }
// Writes `o` into out: its length, 0 when out is too small or the flags too many.
size_t encode(const Outcome& o, std::span<uint8_t> out);
// Whether `in` is an outcome by its type (decode() says whether it is well formed).
bool is_outcome(std::span<const uint8_t> in);
// The outcome `in` carries, its flags written to `absent` (kMaxFlags at least; the result's
// `absent` views it), or nothing when it does not add up.
std::optional<Outcome> decode(std::span<const uint8_t> in, std::span<bool> absent);

} // namespace raftout

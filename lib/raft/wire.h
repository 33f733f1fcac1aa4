#pragma once
// Raft messages on the wire (issue 35): how a replicated collection's engine talks to its peers
// over the kernel's UDP endpoints, under the cluster key. docs/replication.md describes it.
//
// A message (raft_message, the engine's form) is encoded into one payload, cut into fragments of
// at most kFragmentPayload bytes, and each fragment sent as one datagram (no IP fragmentation):
//   magic u32 "BRFT" | version u8 (1) | group u64 | from u64 | to u64 | epoch u64 | seq u64
//   | fragment u16 | fragments u16 | total u32 | payload bytes [fragment's share]
//   | tag: HMAC-SHA256(cluster key, every byte before it)
// big-endian throughout. `epoch` is the sender's life (a boot), `seq` its count of messages to
// that peer in that life: the receiving Reassembler hands messages on in (epoch, seq) order, once,
// and drops a message older than one it delivered (the engine needs each sender's order kept;
// docs/replication.md, defect 4). The payload:
//   type u8 (raft_message_type) | version u8 | fields of the type, u64 for terms, indexes and ids,
//   flags u8, u16 features and capacity; AppendEntries: count u32, then each entry's term u64,
//   type u8, length u32, bytes; InstallSnapshot: conf_index u64, configuration (upstream's
//   raft_configuration_encode) length u32 and bytes, data length u32 and bytes.
// Nothing received is trusted: a datagram is refused unless its tag checks out under the key, and
// an authentic payload is still checked field by field (counts against what is left, entry types,
// flags, nothing after the last field).
#include <cstddef>
#include <cstdint>
#include <span>

#include <raft/engine.h>

namespace raftwire {

using Key = std::span<const uint8_t>; // the cluster key (32 bytes: cluster::Key)

constexpr uint32_t kMagic = 0x42524654; // "BRFT"
constexpr uint8_t kVersion = 1;
constexpr size_t kTagLen = 32;
constexpr size_t kHeaderLen = 4 + 1 + 8 * 5 + 2 + 2 + 4;
constexpr size_t kMaxDatagram = 1200; // as the membership protocol's: no IP fragmentation
constexpr size_t kFragmentPayload = kMaxDatagram - kHeaderLen - kTagLen;
constexpr size_t kMaxFragments = 65535;
constexpr size_t kMaxPayload = kFragmentPayload * kMaxFragments; // what the header can describe
constexpr uint32_t kMaxEntries = 1u << 16;                       // per AppendEntries

enum class Verdict : uint8_t { Accepted, Malformed, BadMac, WrongVersion };

// Who sends to whom, in which group, and which fragment of which message this is.
struct FrameHeader {
    uint64_t group = 0; // the Raft group (a replicated collection)
    uint64_t from = 0;  // raft ids
    uint64_t to = 0;
    uint64_t epoch = 0; // the sender's life
    uint64_t seq = 0;   // the sender's message count to `to` in that life (from 1)
    uint16_t fragment = 0;
    uint16_t fragments = 0;
    uint32_t total = 0; // payload bytes of the whole message
};

// ---- the payload ------------------------------------------------------------------------------

// Bytes encode() writes for `m`; 0 when it cannot be sent (unknown type, too many entries, a
// configuration upstream cannot encode, or a payload over kMaxPayload).
size_t payload_size(const raft_message& m);
// Writes m's payload into out; its length, or 0 as above or when out is too small.
size_t encode(const raft_message& m, std::span<uint8_t> out);
// Reads a payload into `out` the way the engine receives a message: entries, their data (one
// batch) and a snapshot's configuration and data allocated with raft_malloc, owned by whoever
// takes the message (the engine's recv callback, or release()). server_id and server_address are
// left for the caller. Malformed with nothing allocated if anything does not add up.
Verdict decode(std::span<const uint8_t> payload, raft_message& out);
// Frees what decode() allocated for `m` (a message the engine did not take).
void release(raft_message& m);

// ---- fragments ----------------------------------------------------------------------------------

constexpr size_t fragment_count(size_t payload) {
    return payload == 0 ? 1 : (payload + kFragmentPayload - 1) / kFragmentPayload;
}
// Fragment h.fragment of `payload` (h.fragments and h.total must describe it) as one datagram:
// its length, or 0 if the header does not match the payload or out is too small.
size_t seal(const FrameHeader& h, std::span<const uint8_t> payload, Key key, std::span<uint8_t> out);
// Checks a datagram's tag and header; `slice` is then its share of the payload.
Verdict open(std::span<const uint8_t> datagram, Key key, FrameHeader& h, std::span<const uint8_t>& slice);
// The group a datagram names, unauthenticated (0 for anything too short or without the magic):
// only to route it to whoever opens it.
uint64_t peek_group(std::span<const uint8_t> datagram);

// One sender's messages put back together, in order. Storage is the caller's (the largest
// message it accepts); a message longer than that is refused whole.
class Reassembler {
public:
    enum class Result : uint8_t { Partial, Complete, Stale, Refused };

    explicit Reassembler(std::span<uint8_t> storage) : m_storage(storage) {}

    // Takes one opened fragment. Complete: message() is the whole payload (until the next feed).
    // Stale: a message at or before the last one delivered (a duplicate, or overtaken): dropped.
    // Refused: inconsistent with the fragments before it, or too large: the message is dropped.
    // A fragment of a newer message drops the partial one before it (it will not be completed).
    Result feed(const FrameHeader& h, std::span<const uint8_t> slice);
    std::span<const uint8_t> message() const { return m_storage.first(m_total); }
    uint64_t dropped_partial() const { return m_dropped; }

private:
    void start(const FrameHeader& h);
    bool have(uint16_t fragment) const { return m_seen[fragment / 8] & (1u << (fragment % 8)); }

    std::span<uint8_t> m_storage;
    bool m_delivered_any = false;
    uint64_t m_last_epoch = 0, m_last_seq = 0; // the newest message delivered
    bool m_open = false;                       // a message being put together
    uint64_t m_epoch = 0, m_seq = 0;
    uint16_t m_fragments = 0, m_received = 0;
    uint32_t m_total = 0;
    uint64_t m_dropped = 0;
    uint8_t m_seen[kMaxFragments / 8 + 1] = {};
};

} // namespace raftwire

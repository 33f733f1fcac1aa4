#pragma once
// Changes to replicated collections made at a follower, carried to the leader (issue 35;
// docs/replication.md). A follower's cluster task takes such a change from the replication desk as
// the leader's does, and sends the command (origin and ticket its own) to the member it knows as
// leader over the consensus group's UDP endpoint: lib/raft/wire datagrams of a group of their own
// (kGroup), sealed under the cluster key, each sender's commands put back together in order. The
// leader proposes it as it came; the follower answers its caller when it applies the committed
// command that carries its origin, as a leader does. Nothing comes back on this channel: a
// command lost on the way, or refused by a node that no longer leads, ends in the follower's
// timeout (an unknown outcome).
#include <cstddef>
#include <cstdint>
#include <span>

#include <raft/wire.h>

namespace clusterd {

class Forwarder {
public:
    static constexpr uint64_t kGroup = 0x4657440000000000ull; // "FWD": no Raft group is numbered so
    static constexpr size_t kMaxCommand = 20 * 1024;
    static constexpr size_t kMaxPeers = 4;

    // The endpoint's slot and port, the voters' addresses (raft ids 1..n), this member's id, the
    // key and this life's epoch (a receiver orders a sender's commands by epoch and sequence).
    bool start(uint32_t slot, uint16_t port, std::span<const uint32_t> voters, uint64_t self, raftwire::Key key,
               uint64_t epoch);
    // Sends `command` to raft id `to`; false if it cannot (no such voter, too large).
    bool send(uint64_t to, std::span<const uint8_t> command);
    // A datagram of kGroup (raftwire::peek_group): true when it completes a command from a voter
    // (then `command` is it, valid until the next call).
    bool receive(std::span<const uint8_t> datagram, std::span<const uint8_t>& command);

    struct Counters {
        uint64_t sent, received, refused;
    };
    Counters counters() const { return m_counters; }

private:
    struct Peer {
        uint64_t id;
        raftwire::Reassembler* in; // kernel heap, with its storage
        uint64_t seq;
    };
    Peer* peer(uint64_t id);

    uint32_t m_slot = ~0u;
    uint16_t m_port = 0;
    uint32_t m_addresses[kMaxPeers + 1] = {};
    Peer m_peers[kMaxPeers] = {};
    size_t m_peer_count = 0;
    uint64_t m_self = 0, m_epoch = 0;
    raftwire::Key m_key {};
    Counters m_counters {};
};

} // namespace clusterd

#pragma once
// Messages between the consensus group's voters besides the engine's own (issue 35;
// docs/replication.md): a follower's changes carried to the leader (replica_applier.h) and the
// state a voter that installs a snapshot fetches from another (state_transfer.h). Each channel is a
// group number of its own on the group's UDP endpoint: lib/raft/wire datagrams sealed under the
// cluster key, each sender's messages put back together in order (a lost fragment loses its whole
// message: whoever sent it learns it from a timeout, nothing is acknowledged here).
#include <cstddef>
#include <cstdint>
#include <span>

#include <raft/wire.h>

namespace clusterd {

// One wire message as its sealed datagrams, sent through Datagram slot `slot` to ip:port: `h` names
// the group, sender, receiver, epoch and sequence (the fragment fields are filled in here). False
// when a fragment cannot be sealed; a datagram the endpoint refuses is lost like any (UDP), unless
// `wait_for_room`: then a full transmit ring is waited for (up to about 10 ms a fragment), for a
// message too large to lose a part of (a read from outside's answer: federation.h).
bool send_sealed(uint32_t slot, uint32_t ip, uint16_t port, raftwire::FrameHeader h, std::span<const uint8_t> message,
                 raftwire::Key key, bool wait_for_room = false);

class PeerChannel {
public:
    static constexpr size_t kMaxMessage = 20 * 1024;
    // Peers with a message being put together at once: the group's voters and a newcomer; when
    // full, the one heard from longest ago gives its place up.
    static constexpr size_t kMaxPeers = 6;
    // A raft id's IPv4 address (0: unknown).
    using Resolver = uint32_t (*)(uint64_t id);

    // `group`: no Raft group is numbered so (the high bytes spell the channel's name).
    explicit PeerChannel(uint64_t group) : m_group(group) {}
    ~PeerChannel() { forget_peers(); }
    PeerChannel(const PeerChannel&) = delete;
    PeerChannel& operator=(const PeerChannel&) = delete;

    // The endpoint's slot and port, where a raft id is, this member's id, the key and this
    // life's epoch (a receiver orders a sender's messages by epoch and sequence).
    bool start(uint32_t slot, uint16_t port, Resolver resolve, uint64_t self, raftwire::Key key, uint64_t epoch);
    uint64_t group() const { return m_group; }
    // Sends `message` to raft id `to`; false if it cannot (no address, too large).
    bool send(uint64_t to, std::span<const uint8_t> message);
    // A datagram of this channel's group (raftwire::peek_group): true when it completes a message
    // from a member the key authenticates (then `message` is it, valid until the next call, and
    // `from` its raft id).
    bool receive(std::span<const uint8_t> datagram, std::span<const uint8_t>& message, uint64_t& from);

    struct Counters {
        uint64_t sent, received, refused;
    };
    Counters counters() const { return m_counters; }

private:
    struct Peer {
        uint64_t id;
        raftwire::Reassembler* in; // on the kernel heap, its storage (kMaxMessage) after it
        uint64_t heard;            // m_clock when it last completed a message
    };
    // The peer's place (made when it first sends: a channel nobody uses costs no buffers);
    // nullptr for this member, id 0, or no memory.
    Peer* peer(uint64_t id);
    void forget_peers();

    const uint64_t m_group;
    uint32_t m_slot = ~0u;
    uint16_t m_port = 0;
    Resolver m_resolve = nullptr;
    Peer m_peers[kMaxPeers] = {};
    size_t m_peer_count = 0;
    uint64_t m_self = 0, m_epoch = 0;
    // Messages sent in this life, to anyone: a receiver needs each sender's in increasing order
    // only, which one counter keeps when a peer's place is given up and taken again.
    uint64_t m_seq = 0, m_clock = 0;
    raftwire::Key m_key {};
    Counters m_counters {};
};

} // namespace clusterd

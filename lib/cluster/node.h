#pragma once
// One node's view of the swarm: SWIM membership (Das, Gupta, Motivala 2002) with suspicion,
// incarnation numbers and piggy-backed dissemination, a Lifeguard-like suspicion timeout that
// grows with the cluster, and authenticated, replay-protected datagrams. The owner (the kernel's
// network task, or a simulator) feeds it datagrams and clock ticks and sends what it asks to
// send; the node never blocks, allocates or reads a clock of its own.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <cluster/events.h>
#include <cluster/gossip.h>
#include <cluster/key.h>
#include <cluster/members.h>
#include <ktl/splitmix64.h>
#include <cluster/types.h>
#include <cluster/wire.h>
#include <ktl/result.h>

namespace cluster {

class Node {
public:
    // An invalid self_name leaves the node inert (valid() false): it sends nothing and refuses
    // everything as Malformed, rather than speaking under a name peers would reject. boot_id:
    // make_boot_id() of this boot (replay.h), larger than any earlier boot's of this node.
    Node(const Config& config, const Key& key, std::string_view self_name, Address self, uint64_t boot_id,
         uint64_t seed);
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    bool valid() const { return m_valid; }
    bool add_seed(Address seed); // false when full or zero
    void set_broadcast(Address broadcast);
    void tick(uint64_t now_ns, Transport& transport); // drives every timer; call at least at next_deadline_ns()
    Verdict receive(Address from, std::span<const uint8_t> datagram, uint64_t now_ns, Transport& transport);
    uint64_t next_deadline_ns() const; // 0 before the first tick: tick now

    size_t member_count() const { return m_members.size(); } // including self (index 0)
    const Member& member(size_t i) const;                    // i >= member_count(): self
    const Member* find(std::string_view name) const;
    uint64_t generation() const { return m_generation; }
    uint32_t incarnation() const { return m_incarnation; }

    // An operator's ping: probe `name` now; poll the answer with ping_result(). NotFound for an
    // unknown name (or our own), Full with kMaxPendingPings already pending.
    ktl::Result<uint32_t> ping(std::string_view name, uint64_t now_ns, Transport& transport);
    struct PingResult {
        enum class Status : uint8_t { Pending, Answered, TimedOut, Unknown } status = Status::Unknown;
        uint64_t rtt_ns = 0;
    };
    PingResult ping_result(uint32_t id) const;

    size_t drain_events(Event* out, size_t max) { return m_events.drain(out, max); }
    const Stats& stats() const { return m_stats; }
    const Config& config() const { return m_config; }

private:
    struct Probe {
        bool active = false;
        bool acked = false;
        bool indirect_sent = false;
        Name target;
        uint32_t seq = 0;
        uint64_t start_ns = 0;
        uint64_t ack_deadline_ns = 0;
    };
    // A ping we send on behalf of a PingReq; its ack is relayed to the origin under its seq.
    struct Relay {
        bool used = false;
        uint32_t seq = 0;
        uint32_t origin_seq = 0;
        Address origin;
        Name target;
        uint64_t expires_ns = 0;
    };
    struct PendingPing {
        uint32_t id = 0;
        PingResult::Status status = PingResult::Status::Unknown;
        Name target;
        uint32_t seq = 0;
        uint64_t sent_ns = 0;
        uint64_t deadline_ns = 0;
        uint64_t rtt_ns = 0;
    };
    enum class Fill : uint8_t { None, Some, All };
    static constexpr size_t kMaxRelays = 16;
    static constexpr size_t kSomeFill = 4;
    // Pending updates also travel on their own, this often and to this many members (like
    // memberlist's gossip interval), so news does not wait for the next probe to go out.
    static constexpr uint32_t kGossipPerPeriod = 5;
    static constexpr size_t kGossipFanout = 3;
    // Discovery (announcements to seeds and the broadcast address, each answered with a full
    // table by everyone who hears it) costs O(n) datagrams per announcement, O(n^2) per round if
    // everyone announced every period: at 64 nodes that alone saturated two cores. A node that
    // knows others spreads its announcements so the swarm as a whole makes about this many per
    // announce period, whatever its size; a node that knows nobody announces every period.
    static constexpr size_t kDiscoveriesPerPeriod = 4;

    // node.cpp: incoming datagrams and the precedence rules.
    bool apply(const Update& u, uint64_t now_ns);
    bool refute(const Update& u);
    bool plausible_boot(uint64_t boot_id, uint64_t now_ns);
    void reborn(size_t i, Address from, uint64_t now_ns);
    void set_state(size_t i, State s, uint32_t incarnation, uint64_t now_ns);
    void handle_ack(size_t sender, uint64_t now_ns, Transport& t);
    void refuse(Address from, Verdict v, uint64_t now_ns);
    void emit(Event::Kind kind, const Member& m, Verdict v = Verdict::Accepted);
    Update update_of(size_t i) const;
    // node_probe.cpp: timers.
    void start_probe(uint64_t now_ns, Transport& t);
    void finish_probe(uint64_t now_ns);
    void send_ping_reqs(Transport& t);
    void announce(uint64_t now_ns, Transport& t);
    uint64_t discovery_interval_ns();
    void expire_suspects(uint64_t now_ns);
    void gossip(Transport& t);
    uint32_t next_seq();
    int next_probe_target();
    // node_send.cpp: building and sending messages.
    void send(Transport& t, Address to, MessageType type, uint32_t seq, std::string_view target, Address target_addr,
              int recipient, Fill fill);
    size_t fill_updates(size_t n, Fill fill);

    Config m_config;
    Key m_key;
    Name m_self;
    Address m_addr;
    bool m_valid = false;
    uint64_t m_boot_id;
    bool m_have_origin = false;
    uint64_t m_origin_ns = 0; // the monotonic time of our first tick or datagram: boot_time_ms(m_boot_id)
    uint64_t m_counter = 0;
    uint32_t m_incarnation = 1;
    uint32_t m_next_seq = 1;
    ktl::SplitMix64 m_rng;
    MemberTable m_members;
    GossipQueue m_gossip;
    EventRing m_events;
    RefusalLimiter m_refusals;
    Stats m_stats;
    uint64_t m_generation = 0;

    Address m_seeds[kMaxSeeds];
    size_t m_seed_count = 0;
    Address m_broadcast;

    bool m_started = false;
    uint64_t m_next_period_ns = 0;
    uint64_t m_next_announce_ns = 0;
    uint64_t m_next_discovery_ns = 0;
    uint64_t m_next_gossip_ns = 0;
    Probe m_probe;
    uint8_t m_order[kMaxMembers] = {};
    size_t m_order_len = 0;
    size_t m_order_pos = 0;
    size_t m_fill_cursor = 0;
    Relay m_relays[kMaxRelays];
    PendingPing m_pings[kMaxPendingPings];
    uint32_t m_next_ping_id = 1;

    // Scratch space for one message each way, kept here rather than on a kernel stack.
    Message m_in;
    Message m_out;
    uint8_t m_buffer[kMaxDatagram] = {};
};

} // namespace cluster

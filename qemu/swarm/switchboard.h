#pragma once
// The swarm fabric's forwarding decisions, without sockets or clocks: a frame a node sends goes
// to the node that owns its destination MAC (learned from the source addresses seen), or to every
// node with a live path for broadcast, multicast and not-yet-learned unicast; each copy follows
// the shortest live path and meets that path's loss, duplication, delay and jitter, drawn from a
// seeded generator. Every decision is appended to an event log, so that the same scenario and
// seed give the same log twice. The fabric program (qemu/swarm/fabric.cpp) turns deliveries into
// datagrams at their due times.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "topology.h"

#include <ktl/splitmix64.h>

namespace fabric {

struct Delivery {
    uint32_t to;
    uint64_t due_us; // when the copy reaches `to`
};

struct Event {
    uint64_t at_us;
    uint32_t from;
    uint32_t to; // kEveryone for a frame with no destination (all unreachable)
    uint32_t bytes;
    enum class Outcome : uint8_t { Delivered, Duplicated, Lost, Unreachable } outcome;
    uint64_t due_us;
};

class Switchboard {
public:
    static constexpr uint32_t kEveryone = ~0u;

    Switchboard(Topology& topology, uint64_t seed) : m_topology(topology), m_rng(seed ? seed : 0x9e3779b97f4a7c15ull) {}

    // The copies of a frame `from` sent at `now_us` (Ethernet header first: destination, source).
    std::vector<Delivery> send(uint32_t from, const uint8_t* frame, size_t len, uint64_t now_us);

    const std::vector<Event>& log() const { return m_log; }
    // One line per event ("at from->to bytes outcome due"), for comparing runs.
    std::string log_text() const;

    struct LinkCounters {
        uint64_t frames = 0, lost = 0, duplicated = 0;
        uint64_t queue_drops = 0;   // lost because the link's rate backlog passed kMaxBacklogUs
        uint64_t busy_until_us = 0; // a rate-limited link's transmitter is busy until then
    };
    static constexpr uint64_t kMaxBacklogUs = 1'000'000;
    // The event log is kept only while asked for (tests, the fabric's --events file): a long
    // run must not grow it without bound.
    void keep_log(bool on) {
        m_keep_log = on;
        if (!on)
            m_log.clear();
    }
    // The log's text so far, and the log emptied (the fabric appends it to its --events file).
    std::string take_log_text();
    // Per link (a < b), counting every copy that crossed it or was lost on it.
    const std::map<std::pair<uint32_t, uint32_t>, LinkCounters>& counters() const { return m_counters; }

    // Learned MAC addresses are bounded: a node sending from ever new source addresses would
    // otherwise grow the table without end. Beyond this many, the address heard from the longest
    // ago is forgotten (its frames are flooded until it speaks again). A swarm has a few per node.
    static constexpr size_t kMaxMacs = 4096;
    size_t macs() const { return m_owner.size(); }
    uint64_t macs_evicted() const { return m_macs_evicted; }

private:
    double uniform(); // [0, 1)
    uint64_t next() { return m_rng.next(); }
    void route(uint32_t from, uint32_t to, size_t len, uint64_t now_us, std::vector<Delivery>& out);

    Topology& m_topology;
    ktl::SplitMix64 m_rng;
    void learn(uint64_t mac, uint32_t node);
    struct Owner {
        uint32_t node;
        uint64_t heard; // m_heard when last heard: the key of m_by_age
    };
    std::map<uint64_t, Owner> m_owner;     // MAC (48 bits) -> node
    std::map<uint64_t, uint64_t> m_by_age; // heard -> MAC, oldest first
    uint64_t m_heard = 0;
    uint64_t m_macs_evicted = 0;
    std::vector<Event> m_log;
    bool m_keep_log = true;
    std::map<std::pair<uint32_t, uint32_t>, LinkCounters> m_counters;
};

} // namespace fabric

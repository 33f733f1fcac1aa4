#pragma once
// A deterministic in-process network for cluster::Node: a simulated clock in nanoseconds, an
// event queue of datagrams with per-pair delay and loss, partitions, a broadcast address, and
// nodes that can be killed and restarted (a new Node object with a later boot id). All
// randomness comes from one seed, so a failing run replays exactly.
#include <cluster/node.h>

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <memory>
#include <queue>
#include <string>
#include <vector>

namespace sim {

using cluster::Address;

constexpr uint64_t kMs = 1000000ull;
constexpr uint64_t kSecond = 1000 * kMs;
constexpr Address kBroadcast { 0x0a0affff, cluster::kDefaultPort };
// The wall clock at simulated time 0 (2026-01-01), from which boot ids are made as a node's are.
constexpr uint64_t kEpochMs = 1767225600000ull;

inline cluster::Key test_key() { return cluster::derive_key("correct horse battery staple", "test-swarm"); }

struct SimOptions {
    cluster::Config config;
    bool seed_node0 = true; // every node gets node 0 as its seed
    bool broadcast = false; // every node announces to kBroadcast
    uint64_t delay_ns = 2 * kMs;
    uint64_t stagger_ns = 1 * kSecond; // each node starts at a random moment within this of its creation
};

class ClusterSim {
public:
    using Options = SimOptions;

    ClusterSim(size_t n, uint64_t seed, Options options = Options {}) : m_rng(seed), m_options(options) {
        for (size_t i = 0; i < n; ++i)
            add_node();
    }

    // Another node (named node-<i>, at 10.10.0.<i+2>), started now.
    size_t add_node(const cluster::Key& key = test_key()) {
        const size_t i = m_nodes.size();
        auto slot = std::make_unique<Slot>();
        slot->sim = this;
        slot->index = i;
        slot->name = "node-" + std::to_string(i);
        slot->addr = Address { 0x0a0a0002u + uint32_t(i), cluster::kDefaultPort };
        slot->key = key;
        m_nodes.push_back(std::move(slot));
        m_group.push_back(0);
        start(i);
        return i;
    }

    void kill(size_t i) { m_nodes[i]->node.reset(); }
    void restart(size_t i) { start(i); }
    bool running(size_t i) const { return m_nodes[i]->node != nullptr; }

    cluster::Node& node(size_t i) { return *m_nodes[i]->node; }
    const std::string& name(size_t i) const { return m_nodes[i]->name; }
    Address addr(size_t i) const { return m_nodes[i]->addr; }
    size_t size() const { return m_nodes.size(); }
    uint64_t now() const { return m_now; }

    void set_loss_all(double p) { m_loss = p; }
    void set_delay(size_t a, size_t b, uint64_t ns) { m_pair_delay[key(a, b)] = ns; }
    // Nodes in different groups cannot reach each other; heal() puts everyone back in group 0.
    void partition(const std::vector<std::vector<size_t>>& groups) {
        for (size_t g = 0; g < groups.size(); ++g)
            for (size_t i : groups[g])
                m_group[i] = int(g) + 1;
    }
    void heal() { std::fill(m_group.begin(), m_group.end(), 0); }

    // Sees every datagram a node sends (before loss): for capturing messages.
    std::function<void(size_t from, Address to, const std::vector<uint8_t>&)> on_send;

    // Hands bytes to node `to` right now as if they came from `from`.
    cluster::Verdict inject(size_t to, Address from, const std::vector<uint8_t>& bytes) {
        Slot& s = *m_nodes[to];
        return s.node->receive(from, bytes, m_now, s);
    }

    // The operator's ping from node `from`, sent through the simulated network.
    ktl::Result<uint32_t> ping(size_t from, std::string_view target) {
        Slot& s = *m_nodes[from];
        return s.node->ping(target, m_now, s);
    }

    // Runs every event up to `end_ns`; `step` is called after each one and may stop the run by
    // returning true. Returns true if stopped that way.
    bool run_until(uint64_t end_ns, const std::function<bool()>& step = {}) {
        uint64_t last = m_now, same = 0;
        for (;;) {
            uint64_t next = UINT64_MAX;
            for (auto& s : m_nodes)
                if (s->node && deadline(*s) < next)
                    next = deadline(*s);
            const bool datagram = !m_queue.empty() && m_queue.top().at <= next;
            if (datagram)
                next = m_queue.top().at;
            if (next > end_ns) {
                m_now = end_ns;
                return false;
            }
            m_now = next > m_now ? next : m_now;
            // A node whose deadline never moves would spin here forever.
            same = m_now == last ? same + 1 : 0;
            last = m_now;
            if (same > 100000)
                throw std::runtime_error("simulation stuck at " + std::to_string(m_now));
            if (datagram) {
                Datagram d = m_queue.top();
                m_queue.pop();
                deliver(d);
            } else {
                for (auto& s : m_nodes)
                    if (s->node && deadline(*s) <= m_now)
                        s->node->tick(m_now, *s);
            }
            if (step && step())
                return true;
        }
    }

    // Every running node in `nodes` holds every node of `nodes` (itself included) as Alive.
    bool all_alive(const std::vector<size_t>& nodes) {
        for (size_t a : nodes) {
            if (!running(a))
                return false;
            for (size_t b : nodes) {
                const cluster::Member* m = node(a).find(name(b));
                if (!m || m->state != cluster::State::Alive)
                    return false;
            }
        }
        return true;
    }

    std::vector<size_t> all() const {
        std::vector<size_t> v;
        for (size_t i = 0; i < m_nodes.size(); ++i)
            v.push_back(i);
        return v;
    }

private:
    struct Slot final : cluster::Transport {
        ClusterSim* sim = nullptr;
        size_t index = 0;
        std::string name;
        Address addr;
        cluster::Key key {};
        uint64_t start_ns = 0; // a node is powered but silent (no ticks) until then
        std::unique_ptr<cluster::Node> node;
        void send(Address to, std::span<const uint8_t> datagram) override {
            sim->enqueue(index, to, std::vector<uint8_t>(datagram.begin(), datagram.end()));
        }
    };
    struct Datagram {
        uint64_t at = 0;
        uint64_t order = 0;
        size_t from = 0;
        Address to;
        std::vector<uint8_t> bytes;
        bool operator>(const Datagram& o) const { return at != o.at ? at > o.at : order > o.order; }
    };

    static uint64_t key(size_t a, size_t b) { return a < b ? (uint64_t(a) << 32) | b : (uint64_t(b) << 32) | a; }

    static uint64_t deadline(const Slot& s) {
        const uint64_t d = s.node->next_deadline_ns();
        return d > s.start_ns ? d : s.start_ns;
    }

    void start(size_t i) {
        Slot& s = *m_nodes[i];
        s.start_ns = m_now + (m_options.stagger_ns ? m_rng.below(m_options.stagger_ns) : 0);
        const uint64_t boot_id = cluster::make_boot_id(kEpochMs + m_now / kMs, m_rng.next());
        s.node = std::make_unique<cluster::Node>(m_options.config, s.key, s.name, s.addr, boot_id, m_rng.next());
        if (m_options.seed_node0)
            s.node->add_seed(addr(0));
        if (m_options.broadcast)
            s.node->set_broadcast(kBroadcast);
    }

    bool lost() { return m_loss > 0 && double(m_rng.next() >> 11) / double(1ull << 53) < m_loss; }

    void enqueue(size_t from, Address to, std::vector<uint8_t> bytes) {
        if (on_send)
            on_send(from, to, bytes);
        for (size_t j = 0; j < m_nodes.size(); ++j) {
            if (!(to == kBroadcast) && !(to == m_nodes[j]->addr))
                continue;
            if (m_group[from] != m_group[j] || (j != from && lost()))
                continue;
            auto d = m_pair_delay.find(key(from, j));
            uint64_t delay = d == m_pair_delay.end() ? m_options.delay_ns : d->second;
            m_queue.push(Datagram { m_now + delay, m_order++, from, m_nodes[j]->addr, bytes });
        }
    }

    void deliver(const Datagram& d) {
        for (auto& s : m_nodes)
            if (s->addr == d.to && s->node)
                s->node->receive(m_nodes[d.from]->addr, d.bytes, m_now, *s);
    }

    ktl::SplitMix64 m_rng;
    Options m_options;
    std::vector<std::unique_ptr<Slot>> m_nodes;
    std::vector<int> m_group;
    std::map<uint64_t, uint64_t> m_pair_delay;
    std::priority_queue<Datagram, std::vector<Datagram>, std::greater<Datagram>> m_queue;
    uint64_t m_now = 0;
    uint64_t m_order = 0;
    double m_loss = 0;
};

} // namespace sim

#pragma once
// The swarm fabric's graph: nodes (QEMU guests, each with one NIC), the links between them with
// their impairments, node states, and the shortest live path between two nodes. Host-only (the
// fabric program, `./basalt swarm`); tested in tests/host/fabric_test.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ktl/result.h>

namespace fabric {

struct LinkState {
    bool up = true;
    double loss = 0;        // probability 0..1 a frame is lost on this link
    double dup = 0;         // probability 0..1 a frame is duplicated on this link
    uint32_t delay_us = 0;  // one way
    uint32_t jitter_us = 0; // added delay uniform in [0, jitter]
    uint32_t rate_kbps = 0; // 0: unlimited; else frames queue for the link (FIFO, tail drop past 1 s of backlog)
};

struct Link {
    uint32_t a, b; // a < b
    LinkState state;
};

enum class NodeState : uint8_t { Up, Paused, Down };

// A route's composition: delays add, losses and duplications compound.
struct Path {
    std::vector<uint32_t> nodes; // from ... to
    uint32_t delay_us = 0;
    uint32_t jitter_us = 0;
    double loss = 0; // 1 - product of (1 - loss_i)
    double dup = 0;  // 1 - product of (1 - dup_i)
};

class Topology {
public:
    static constexpr uint32_t kMaxNodes = 256;

    Topology() = default; // no nodes (ktl::Result needs one); make() and parse() build real ones

    // mesh, ring, star (node 0 the hub), tree (binary: node i's parent is (i - 1) / 2), line.
    static ktl::Result<Topology> make(std::string_view kind, uint32_t nodes);
    // {"nodes": N, "links": [[a, b], ...]}: every link between two distinct nodes, once.
    static ktl::Result<Topology> parse(std::string_view json);

    uint32_t nodes() const { return m_nodes; }
    const std::vector<Link>& links() const { return m_links; }
    const Link* link(uint32_t a, uint32_t b) const; // either order; nullptr when there is none
    // Every change goes through the topology, which keeps its routes for as long as nothing changes.
    bool set_link(uint32_t a, uint32_t b, const LinkState& state); // false when there is no such link
    void set_all_links(const LinkState& state);
    NodeState node_state(uint32_t n) const { return m_node_state[n]; }
    void set_node_state(uint32_t n, NodeState s);

    // Cuts every link between nodes of different groups (nodes in no group are cut from all);
    // heal() brings back exactly the links a partition cut, and nothing set down otherwise.
    void partition(const std::vector<std::vector<uint32_t>>& groups);
    void heal();
    bool partitioned() const { return !m_cut.empty(); }

    // The shortest live path (fewest links; among equals, the lowest node ids first, so a route
    // never depends on anything but the graph): live links, intermediate nodes up. Routes are
    // computed once per source until something changes (the fabric asks for one per frame and
    // destination: recomputing them made it the bottleneck of a 48-node mesh).
    std::optional<Path> path(uint32_t from, uint32_t to) const;

private:
    explicit Topology(uint32_t nodes);
    void add_link(uint32_t a, uint32_t b);
    void changed() { ++m_version; }
    const std::vector<int32_t>& routes_from(uint32_t from) const;

    uint32_t m_nodes = 0;
    std::vector<Link> m_links;
    std::vector<int32_t> m_index; // m_nodes x m_nodes: the link between two nodes, or -1
    std::vector<NodeState> m_node_state;
    std::vector<size_t> m_cut; // links the partition took down
    uint64_t m_version = 1;
    // Per source: each node's predecessor on its shortest live path (-1: unreachable), and the
    // version it was computed at.
    mutable std::vector<std::vector<int32_t>> m_previous;
    mutable std::vector<uint64_t> m_previous_version;
};

} // namespace fabric

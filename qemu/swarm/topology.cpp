#include "topology.h"

#include <algorithm>
#include <deque>

#include <json/json.h>

namespace fabric {

Topology::Topology(uint32_t nodes)
    : m_nodes(nodes), m_index(size_t(nodes) * nodes, -1), m_node_state(nodes, NodeState::Up), m_previous(nodes),
      m_previous_version(nodes, 0) {}

void Topology::add_link(uint32_t a, uint32_t b) {
    if (a > b)
        std::swap(a, b);
    if (a == b || m_index[size_t(a) * m_nodes + b] >= 0)
        return;
    m_index[size_t(a) * m_nodes + b] = m_index[size_t(b) * m_nodes + a] = static_cast<int32_t>(m_links.size());
    m_links.push_back({ a, b, {} });
}

ktl::Result<Topology> Topology::make(std::string_view kind, uint32_t nodes) {
    if (nodes == 0 || nodes > kMaxNodes)
        return ktl::Error::OutOfRange;
    Topology t(nodes);
    if (kind == "mesh") {
        for (uint32_t a = 0; a < nodes; ++a)
            for (uint32_t b = a + 1; b < nodes; ++b)
                t.add_link(a, b);
    } else if (kind == "ring") {
        for (uint32_t a = 0; a + 1 < nodes; ++a)
            t.add_link(a, a + 1);
        if (nodes > 2)
            t.add_link(nodes - 1, 0);
    } else if (kind == "star") {
        for (uint32_t a = 1; a < nodes; ++a)
            t.add_link(0, a);
    } else if (kind == "tree") {
        for (uint32_t a = 1; a < nodes; ++a)
            t.add_link((a - 1) / 2, a);
    } else if (kind == "line") {
        for (uint32_t a = 0; a + 1 < nodes; ++a)
            t.add_link(a, a + 1);
    } else {
        return ktl::Error::InvalidArgs;
    }
    return t;
}

ktl::Result<Topology> Topology::parse(std::string_view text) {
    std::vector<json::Node> arena(json::value_bound(text));
    auto doc = json::Document::parse(text, arena);
    if (!doc)
        return ktl::Error::InvalidArgs;
    json::Value root = doc->root();
    auto n = root.find("nodes").as_uint64();
    if (!n || *n == 0 || *n > kMaxNodes)
        return ktl::Error::OutOfRange;
    Topology t(static_cast<uint32_t>(*n));
    json::Value links = root.find("links");
    if (links.valid() && links.type() != json::Type::Array)
        return ktl::Error::InvalidArgs;
    for (json::Value l = links.first(); l.valid(); l = l.next_sibling()) {
        auto a = l.at(0).as_uint64(), b = l.at(1).as_uint64();
        if (l.type() != json::Type::Array || !a || !b || *a >= t.m_nodes || *b >= t.m_nodes || *a == *b ||
            l.at(2).valid())
            return ktl::Error::InvalidArgs;
        t.add_link(static_cast<uint32_t>(*a), static_cast<uint32_t>(*b));
    }
    return t;
}

const Link* Topology::link(uint32_t a, uint32_t b) const {
    if (a >= m_nodes || b >= m_nodes)
        return nullptr;
    int32_t i = m_index[size_t(a) * m_nodes + b];
    return i < 0 ? nullptr : &m_links[size_t(i)];
}

bool Topology::set_link(uint32_t a, uint32_t b, const LinkState& state) {
    const Link* l = link(a, b);
    if (!l)
        return false;
    m_links[size_t(l - m_links.data())].state = state;
    changed();
    return true;
}

void Topology::set_all_links(const LinkState& state) {
    for (Link& l : m_links)
        l.state = state;
    changed();
}

void Topology::set_node_state(uint32_t n, NodeState s) {
    m_node_state[n] = s;
    changed();
}

void Topology::partition(const std::vector<std::vector<uint32_t>>& groups) {
    heal();
    std::vector<int> group(m_nodes, -1);
    for (size_t g = 0; g < groups.size(); ++g)
        for (uint32_t n : groups[g])
            if (n < m_nodes)
                group[n] = static_cast<int>(g);
    for (size_t i = 0; i < m_links.size(); ++i) {
        Link& l = m_links[i];
        if (l.state.up && (group[l.a] < 0 || group[l.a] != group[l.b])) {
            l.state.up = false;
            m_cut.push_back(i);
        }
    }
    changed();
}

void Topology::heal() {
    for (size_t i : m_cut)
        m_links[i].state.up = true;
    m_cut.clear();
    changed();
}

// Breadth-first from `from` over live links, neighbours in ascending order: the first path found
// to each node is the shortest, and the same on every run. Nodes that are not up carry nothing
// through (a path may still end at one: path() refuses those itself).
const std::vector<int32_t>& Topology::routes_from(uint32_t from) const {
    std::vector<int32_t>& previous = m_previous[from];
    if (m_previous_version[from] == m_version)
        return previous;
    previous.assign(m_nodes, -1);
    std::vector<bool> seen(m_nodes, false);
    std::deque<uint32_t> queue { from };
    seen[from] = true;
    while (!queue.empty()) {
        uint32_t n = queue.front();
        queue.pop_front();
        for (uint32_t m = 0; m < m_nodes; ++m) {
            int32_t l = m_index[size_t(n) * m_nodes + m];
            if (l < 0 || seen[m] || !m_links[size_t(l)].state.up)
                continue;
            seen[m] = true;
            previous[m] = static_cast<int32_t>(n);
            if (m_node_state[m] == NodeState::Up)
                queue.push_back(m);
        }
    }
    m_previous_version[from] = m_version;
    return previous;
}

std::optional<Path> Topology::path(uint32_t from, uint32_t to) const {
    if (from >= m_nodes || to >= m_nodes || m_node_state[from] != NodeState::Up || m_node_state[to] != NodeState::Up)
        return std::nullopt;
    const std::vector<int32_t>& previous = routes_from(from);
    if (from != to && previous[to] < 0)
        return std::nullopt;
    Path p;
    for (int32_t n = static_cast<int32_t>(to); n >= 0 && static_cast<uint32_t>(n) != from; n = previous[size_t(n)])
        p.nodes.push_back(static_cast<uint32_t>(n));
    p.nodes.push_back(from);
    std::reverse(p.nodes.begin(), p.nodes.end());
    double keep = 1, single = 1;
    for (size_t i = 0; i + 1 < p.nodes.size(); ++i) {
        const LinkState& s = link(p.nodes[i], p.nodes[i + 1])->state;
        p.delay_us += s.delay_us;
        p.jitter_us += s.jitter_us;
        keep *= 1 - s.loss;
        single *= 1 - s.dup;
    }
    p.loss = 1 - keep;
    p.dup = 1 - single;
    return p;
}

} // namespace fabric

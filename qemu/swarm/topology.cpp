#include "topology.h"

#include <algorithm>
#include <deque>

#include <json/json.h>

namespace fabric {

namespace {

void add(std::vector<Link>& links, uint32_t a, uint32_t b) {
    if (a > b)
        std::swap(a, b);
    if (a == b)
        return;
    for (const Link& l : links)
        if (l.a == a && l.b == b)
            return;
    links.push_back({ a, b, {} });
}

} // namespace

ktl::Result<Topology> Topology::make(std::string_view kind, uint32_t nodes) {
    if (nodes == 0 || nodes > kMaxNodes)
        return ktl::Error::OutOfRange;
    Topology t;
    t.m_nodes = nodes;
    t.m_node_state.assign(nodes, NodeState::Up);
    if (kind == "mesh") {
        for (uint32_t a = 0; a < nodes; ++a)
            for (uint32_t b = a + 1; b < nodes; ++b)
                add(t.m_links, a, b);
    } else if (kind == "ring") {
        for (uint32_t a = 0; a + 1 < nodes; ++a)
            add(t.m_links, a, a + 1);
        if (nodes > 2)
            add(t.m_links, nodes - 1, 0);
    } else if (kind == "star") {
        for (uint32_t a = 1; a < nodes; ++a)
            add(t.m_links, 0, a);
    } else if (kind == "tree") {
        for (uint32_t a = 1; a < nodes; ++a)
            add(t.m_links, (a - 1) / 2, a);
    } else if (kind == "line") {
        for (uint32_t a = 0; a + 1 < nodes; ++a)
            add(t.m_links, a, a + 1);
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
    Topology t;
    t.m_nodes = static_cast<uint32_t>(*n);
    t.m_node_state.assign(t.m_nodes, NodeState::Up);
    json::Value links = root.find("links");
    if (links.valid() && links.type() != json::Type::Array)
        return ktl::Error::InvalidArgs;
    for (json::Value l = links.first(); l.valid(); l = l.next_sibling()) {
        auto a = l.at(0).as_uint64(), b = l.at(1).as_uint64();
        if (l.type() != json::Type::Array || !a || !b || *a >= t.m_nodes || *b >= t.m_nodes || *a == *b || l.at(2).valid())
            return ktl::Error::InvalidArgs;
        add(t.m_links, static_cast<uint32_t>(*a), static_cast<uint32_t>(*b));
    }
    return t;
}

Link* Topology::link(uint32_t a, uint32_t b) {
    if (a > b)
        std::swap(a, b);
    for (Link& l : m_links)
        if (l.a == a && l.b == b)
            return &l;
    return nullptr;
}

const Link* Topology::link(uint32_t a, uint32_t b) const { return const_cast<Topology*>(this)->link(a, b); }

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
}

void Topology::heal() {
    for (size_t i : m_cut)
        m_links[i].state.up = true;
    m_cut.clear();
}

std::optional<Path> Topology::path(uint32_t from, uint32_t to) const {
    if (from >= m_nodes || to >= m_nodes || m_node_state[from] != NodeState::Up || m_node_state[to] != NodeState::Up)
        return std::nullopt;
    // Breadth-first from `from`, neighbours in ascending order: the first path found to each
    // node is the shortest, and the same on every run.
    std::vector<std::vector<uint32_t>> adjacent(m_nodes);
    for (const Link& l : m_links) {
        if (!l.state.up)
            continue;
        adjacent[l.a].push_back(l.b);
        adjacent[l.b].push_back(l.a);
    }
    for (auto& list : adjacent)
        std::sort(list.begin(), list.end());
    std::vector<int64_t> previous(m_nodes, -1);
    std::vector<bool> seen(m_nodes, false);
    std::deque<uint32_t> queue { from };
    seen[from] = true;
    while (!queue.empty() && !seen[to]) {
        uint32_t n = queue.front();
        queue.pop_front();
        for (uint32_t m : adjacent[n]) {
            if (seen[m] || (m != to && m_node_state[m] != NodeState::Up))
                continue;
            seen[m] = true;
            previous[m] = n;
            queue.push_back(m);
        }
    }
    if (!seen[to])
        return std::nullopt;
    Path p;
    for (int64_t n = to; n >= 0; n = previous[static_cast<uint32_t>(n)])
        p.nodes.push_back(static_cast<uint32_t>(n));
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

#include "switchboard.h"

#include <cstdio>

namespace fabric {

namespace {

uint64_t mac_at(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 6; ++i)
        v = v << 8 | p[i];
    return v;
}

const char* outcome_name(Event::Outcome o) {
    switch (o) {
    case Event::Outcome::Delivered: return "delivered";
    case Event::Outcome::Duplicated: return "duplicated";
    case Event::Outcome::Lost: return "lost";
    case Event::Outcome::Unreachable: return "unreachable";
    }
    return "?";
}

} // namespace

double Switchboard::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::vector<Delivery> Switchboard::send(uint32_t from, const uint8_t* frame, size_t len, uint64_t now_us) {
    std::vector<Delivery> out;
    if (from >= m_topology.nodes() || len < 14 || m_topology.node_state(from) != NodeState::Up)
        return out;
    const uint64_t dst = mac_at(frame), src = mac_at(frame + 6);
    if (!(src >> 40 & 1)) // a unicast source: that node owns this address from now on
        learn(src, from);
    auto owner = m_owner.find(dst);
    if (!(dst >> 40 & 1) && owner != m_owner.end()) {
        if (owner->second.node != from)
            route(from, owner->second.node, len, now_us, out);
    } else {
        // Broadcast, multicast, unknown unicast: every other node (those out of reach are logged).
        for (uint32_t n = 0; n < m_topology.nodes(); ++n)
            if (n != from)
                route(from, n, len, now_us, out);
    }
    return out;
}

void Switchboard::learn(uint64_t mac, uint32_t node) {
    const uint64_t heard = ++m_heard;
    auto [it, fresh] = m_owner.try_emplace(mac, Owner { node, heard });
    if (!fresh) {
        m_by_age.erase(it->second.heard);
        it->second = Owner { node, heard };
    }
    m_by_age.emplace(heard, mac);
    if (m_owner.size() > kMaxMacs) {
        auto oldest = m_by_age.begin();
        m_owner.erase(oldest->second);
        m_by_age.erase(oldest);
        ++m_macs_evicted;
    }
}

void Switchboard::route(uint32_t from, uint32_t to, size_t len, uint64_t now_us, std::vector<Delivery>& out) {
    auto path = m_topology.path(from, to);
    Event e { now_us, from, to, static_cast<uint32_t>(len), Event::Outcome::Unreachable, 0 };
    if (!path) {
        if (m_keep_log)
            m_log.push_back(e);
        return;
    }
    uint64_t queued_us = 0; // waiting for rate-limited links' transmitters
    // Each link of the path in turn: the frame may die on it, or be doubled there.
    uint32_t copies = 1;
    for (size_t i = 0; i + 1 < path->nodes.size() && copies > 0; ++i) {
        uint32_t a = path->nodes[i], b = path->nodes[i + 1];
        const LinkState& s = m_topology.link(a, b)->state;
        auto& c = m_counters[{ a < b ? a : b, a < b ? b : a }];
        uint32_t survived = 0;
        for (uint32_t k = 0; k < copies; ++k) {
            ++c.frames;
            if (s.loss > 0 && uniform() < s.loss) {
                ++c.lost;
                continue;
            }
            ++survived;
            if (s.dup > 0 && uniform() < s.dup) {
                ++c.duplicated;
                ++survived;
            }
        }
        copies = survived < 8 ? survived : 8; // a duplication storm stays bounded
        if (s.rate_kbps && copies > 0) {
            // Serialization at the link's rate behind what it is already sending (bits * 1000 / kbps = us).
            uint64_t start = c.busy_until_us > now_us ? c.busy_until_us : now_us;
            uint64_t end = start + uint64_t(copies) * len * 8 * 1000 / s.rate_kbps;
            if (end - now_us > kMaxBacklogUs) {
                c.queue_drops += copies;
                c.lost += copies;
                copies = 0;
            } else {
                c.busy_until_us = end;
                queued_us += end - now_us;
            }
        }
    }
    if (copies == 0) {
        e.outcome = Event::Outcome::Lost;
        if (m_keep_log)
            m_log.push_back(e);
        return;
    }
    for (uint32_t k = 0; k < copies; ++k) {
        uint64_t delay = path->delay_us + queued_us;
        if (path->jitter_us)
            delay += next() % (uint64_t(path->jitter_us) + 1);
        e.outcome = k == 0 ? Event::Outcome::Delivered : Event::Outcome::Duplicated;
        e.due_us = now_us + delay;
        if (m_keep_log)
            m_log.push_back(e);
        out.push_back({ to, e.due_us });
    }
}

std::string Switchboard::take_log_text() {
    std::string s = log_text();
    m_log.clear();
    return s;
}

std::string Switchboard::log_text() const {
    std::string s;
    char line[128];
    for (const Event& e : m_log) {
        std::snprintf(line, sizeof line, "%llu %u->%u %u %s %llu\n", static_cast<unsigned long long>(e.at_us), e.from,
                      e.to, e.bytes, outcome_name(e.outcome), static_cast<unsigned long long>(e.due_us));
        s += line;
    }
    return s;
}

} // namespace fabric

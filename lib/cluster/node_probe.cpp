// The node's timers: the protocol period (probe, indirect probes, suspicion), suspicion
// timeouts, announcements and operator pings.
#include "node.h"

namespace cluster {
namespace {

constexpr uint64_t kMs = 1000000ull;

} // namespace

void Node::tick(uint64_t now_ns, Transport& t) {
    if (!m_valid)
        return;
    if (!m_have_origin) {
        m_have_origin = true;
        m_origin_ns = now_ns;
    }
    if (!m_started) {
        m_started = true;
        m_next_period_ns = now_ns;
        m_next_announce_ns = now_ns;
        m_next_discovery_ns = now_ns;
        m_next_gossip_ns = now_ns;
        m_members.at(0).state_since_ns = now_ns;
    }
    expire_suspects(now_ns);
    if (m_probe.active && !m_probe.acked && !m_probe.indirect_sent && now_ns >= m_probe.ack_deadline_ns)
        send_ping_reqs(t);
    if (now_ns >= m_next_period_ns) {
        finish_probe(now_ns);
        start_probe(now_ns, t);
        m_next_period_ns = now_ns + m_config.period_ms * kMs;
    }
    if (now_ns >= m_next_announce_ns) {
        announce(now_ns, t);
        m_next_announce_ns = now_ns + m_config.announce_ms * kMs;
    }
    if (now_ns >= m_next_gossip_ns) {
        gossip(t);
        m_next_gossip_ns = now_ns + m_config.period_ms * kMs / kGossipPerPeriod;
    }
    for (PendingPing& p : m_pings)
        if (p.status == PingResult::Status::Pending && now_ns >= p.deadline_ns)
            p.status = PingResult::Status::TimedOut;
    for (Relay& r : m_relays)
        if (r.used && now_ns >= r.expires_ns)
            r.used = false;
}

uint64_t Node::next_deadline_ns() const {
    if (!m_valid)
        return UINT64_MAX;
    if (!m_started)
        return 0;
    uint64_t d = m_next_period_ns < m_next_announce_ns ? m_next_period_ns : m_next_announce_ns;
    if (m_gossip.size() > 0 && m_next_gossip_ns < d)
        d = m_next_gossip_ns;
    if (m_probe.active && !m_probe.acked && !m_probe.indirect_sent && m_probe.ack_deadline_ns < d)
        d = m_probe.ack_deadline_ns;
    const uint64_t timeout = suspicion_timeout_ns(m_config, m_members.live_count());
    for (size_t i = 1; i < m_members.size(); ++i) {
        const Member& m = m_members.at(i);
        if (m.state == State::Suspect && m.state_since_ns + timeout < d)
            d = m.state_since_ns + timeout;
    }
    for (const PendingPing& p : m_pings)
        if (p.status == PingResult::Status::Pending && p.deadline_ns < d)
            d = p.deadline_ns;
    return d;
}

void Node::expire_suspects(uint64_t now_ns) {
    const uint64_t timeout = suspicion_timeout_ns(m_config, m_members.live_count());
    for (size_t i = 1; i < m_members.size(); ++i) {
        Member& m = m_members.at(i);
        if (m.state != State::Suspect || now_ns < m.state_since_ns + timeout)
            continue;
        set_state(i, State::Dead, m.incarnation, now_ns);
        m_gossip.push(update_of(i));
    }
}

// Round-robin over a shuffled list, reshuffled each round (SWIM 4.3): every member is probed
// within a bounded time, yet the order gives a failure nothing to synchronise with.
int Node::next_probe_target() {
    for (int pass = 0; pass < 2; ++pass) {
        while (m_order_pos < m_order_len) {
            size_t i = m_order[m_order_pos++];
            if (i > 0 && i < m_members.size() && m_members.at(i).state != State::Dead)
                return int(i);
        }
        m_order_len = 0;
        m_order_pos = 0;
        for (size_t i = 1; i < m_members.size(); ++i)
            if (m_members.at(i).state != State::Dead)
                m_order[m_order_len++] = uint8_t(i);
        for (size_t i = m_order_len; i > 1; --i) {
            size_t j = size_t(m_rng.below(i));
            uint8_t tmp = m_order[i - 1];
            m_order[i - 1] = m_order[j];
            m_order[j] = tmp;
        }
    }
    return -1;
}

void Node::start_probe(uint64_t now_ns, Transport& t) {
    m_probe = Probe {};
    int target = next_probe_target();
    if (target < 0)
        return;
    const Member& m = m_members.at(size_t(target));
    m_probe.active = true;
    m_probe.target.set(name_of(m));
    m_probe.seq = next_seq();
    m_probe.start_ns = now_ns;
    m_probe.ack_deadline_ns = now_ns + m_config.ack_timeout_ms * kMs;
    ++m_stats.probes;
    send(t, m.addr, MessageType::Ping, m_probe.seq, name_of(m), Address {}, target, Fill::Some);
}

void Node::finish_probe(uint64_t now_ns) {
    if (!m_probe.active || m_probe.acked)
        return;
    m_probe.active = false;
    int i = m_members.find(m_probe.target.view());
    if (i <= 0)
        return;
    Member& m = m_members.at(size_t(i));
    if (m.state != State::Alive)
        return;
    set_state(size_t(i), State::Suspect, m.incarnation, now_ns);
    m_gossip.push(update_of(size_t(i)));
}

void Node::send_ping_reqs(Transport& t) {
    m_probe.indirect_sent = true;
    int target = m_members.find(m_probe.target.view());
    if (target <= 0)
        return;
    uint8_t helpers[kMaxMembers];
    size_t n = 0;
    for (size_t i = 1; i < m_members.size(); ++i)
        if (int(i) != target && m_members.at(i).state == State::Alive)
            helpers[n++] = uint8_t(i);
    const Address target_addr = m_members.at(size_t(target)).addr;
    // A partial Fisher-Yates shuffle: the first k slots become k distinct random helpers.
    for (size_t k = 0; k < m_config.indirect && k < n; ++k) {
        size_t j = k + size_t(m_rng.below(n - k));
        uint8_t h = helpers[j];
        helpers[j] = helpers[k];
        helpers[k] = h;
        ++m_stats.indirect_probes;
        send(t, m_members.at(h).addr, MessageType::PingReq, m_probe.seq, m_probe.target.view(), target_addr, h,
             Fill::None);
    }
}

// Gossip alone travels as an unsolicited Ack (seq 0 matches no probe): no fifth message type,
// and older peers simply apply its updates.
void Node::gossip(Transport& t) {
    if (m_gossip.size() == 0)
        return;
    uint8_t peers[kMaxMembers];
    size_t n = 0;
    for (size_t i = 1; i < m_members.size(); ++i)
        if (m_members.at(i).state != State::Dead)
            peers[n++] = uint8_t(i);
    for (size_t k = 0; k < kGossipFanout && k < n; ++k) {
        size_t j = k + size_t(m_rng.below(n - k));
        uint8_t p = peers[j];
        peers[j] = peers[k];
        peers[k] = p;
        send(t, m_members.at(p).addr, MessageType::Ack, 0, m_self.view(), Address {}, p, Fill::None);
    }
}

uint32_t Node::next_seq() {
    if (m_next_seq == 0)
        m_next_seq = 1; // 0 marks unsolicited gossip
    return m_next_seq++;
}

// Alive announcements: how a new node finds the swarm (seeds and broadcast), and how two halves
// of a healed partition find each other again (each side still knows the other's addresses as
// dead, and one dead member hears from us every announce period).
void Node::announce(uint64_t now_ns, Transport& t) {
    if (now_ns >= m_next_discovery_ns) {
        m_next_discovery_ns = now_ns + discovery_interval_ns();
        for (size_t i = 0; i < m_seed_count; ++i)
            if (!(m_seeds[i] == m_addr))
                send(t, m_seeds[i], MessageType::Announce, next_seq(), {}, Address {}, -1, Fill::All);
        if (m_broadcast.ip != 0 && m_broadcast.port != 0)
            send(t, m_broadcast, MessageType::Announce, next_seq(), {}, Address {}, -1, Fill::All);
    }
    size_t dead = 0;
    for (size_t i = 1; i < m_members.size(); ++i)
        if (m_members.at(i).state == State::Dead)
            ++dead;
    if (dead == 0)
        return;
    size_t pick = size_t(m_rng.below(dead));
    for (size_t i = 1; i < m_members.size(); ++i) {
        if (m_members.at(i).state != State::Dead)
            continue;
        if (pick-- == 0) {
            send(t, m_members.at(i).addr, MessageType::Announce, next_seq(), {}, Address {}, int(i), Fill::All);
            return;
        }
    }
}

// Scaled by every member we know of, dead ones included: a swarm whose members all declared
// each other dead under overload must not answer with n times the discovery traffic (the dead
// are called one at a time above instead). Jittered so that nodes booted together drift apart.
uint64_t Node::discovery_interval_ns() {
    const uint64_t base = uint64_t(m_config.announce_ms) * kMs;
    const size_t known = m_members.size();
    if (known <= 1)
        return base;
    const uint64_t scale = known / kDiscoveriesPerPeriod;
    if (scale <= 1)
        return base;
    return base * scale / 2 + base * m_rng.below(scale); // uniform in [scale/2, 3*scale/2) periods
}

ktl::Result<uint32_t> Node::ping(std::string_view name, uint64_t now_ns, Transport& t) {
    int i = m_valid ? m_members.find(name) : -1;
    if (i <= 0)
        return ktl::Error::NotFound;
    PendingPing* slot = nullptr;
    for (PendingPing& p : m_pings) {
        if (p.status == PingResult::Status::Pending)
            continue;
        if (!slot || p.id < slot->id) // reuse the oldest finished slot
            slot = &p;
    }
    if (!slot)
        return ktl::Error::Full;
    const Member& m = m_members.at(size_t(i));
    *slot = PendingPing {};
    slot->id = m_next_ping_id++;
    slot->status = PingResult::Status::Pending;
    slot->target.set(name_of(m));
    slot->seq = next_seq();
    slot->sent_ns = now_ns;
    slot->deadline_ns = now_ns + m_config.period_ms * kMs;
    send(t, m.addr, MessageType::Ping, slot->seq, name_of(m), Address {}, i, Fill::None);
    return slot->id;
}

} // namespace cluster

#include "node.h"

#include <crypto/hmac_sha256.h>

namespace cluster {

Node::Node(const Config& config, const Key& key, std::string_view self_name, Address self, uint64_t boot_id,
           uint64_t seed)
    : m_config(sanitize(config)), m_key(key), m_addr(self), m_boot_id(boot_id), m_rng(seed) {
    m_valid = m_self.set(self_name);
    m_members.init_self(m_valid ? self_name : std::string_view(), self, m_incarnation, 0);
}

Node::~Node() { crypto::wipe(m_key.data(), m_key.size()); }

bool Node::add_seed(Address seed) {
    if (m_seed_count == kMaxSeeds || seed.ip == 0 || seed.port == 0)
        return false;
    m_seeds[m_seed_count++] = seed;
    return true;
}

void Node::set_broadcast(Address broadcast) { m_broadcast = broadcast; }

const Member& Node::member(size_t i) const { return m_members.at(i < m_members.size() ? i : 0); }

const Member* Node::find(std::string_view name) const {
    int i = m_members.find(name);
    return i < 0 ? nullptr : &m_members.at(size_t(i));
}

Update Node::update_of(size_t i) const {
    const Member& m = m_members.at(i);
    Update u;
    u.name.set(name_of(m));
    u.addr = m.addr;
    u.state = m.state;
    u.incarnation = m.incarnation;
    return u;
}

void Node::emit(Event::Kind kind, const Member& m, Verdict v) {
    Event e;
    e.kind = kind;
    std::string_view name = name_of(m);
    for (size_t i = 0; i < name.size(); ++i)
        e.name[i] = name[i];
    e.addr = m.addr;
    e.incarnation = m.incarnation;
    e.verdict = v;
    if (!m_events.push(e))
        ++m_stats.events_lost;
}

void Node::refuse(Address from, Verdict v, uint64_t now_ns) {
    switch (v) {
    case Verdict::Malformed: ++m_stats.malformed; break;
    case Verdict::BadMac: ++m_stats.bad_mac; break;
    case Verdict::Replayed: ++m_stats.replayed; break;
    case Verdict::WrongVersion: ++m_stats.wrong_version; break;
    case Verdict::TableFull: ++m_stats.table_full; break;
    case Verdict::FromSelf: ++m_stats.from_self; return; // our own broadcast: nothing wrong
    case Verdict::Accepted: return;
    }
    uint64_t unreported = 0;
    if (!m_refusals.allow(v, now_ns, unreported)) {
        ++m_stats.refusals_unreported;
        return;
    }
    Event e;
    e.kind = Event::Kind::Refused;
    e.addr = from;
    e.verdict = v;
    e.unreported = unreported;
    if (!m_events.push(e))
        ++m_stats.events_lost;
}

void Node::set_state(size_t i, State s, uint32_t incarnation, uint64_t now_ns) {
    Member& m = m_members.at(i);
    const State before = m.state;
    m.incarnation = incarnation;
    ++m_generation;
    if (before == s)
        return;
    m.state = s;
    m.state_since_ns = now_ns;
    switch (s) {
    case State::Alive: emit(Event::Kind::Alive, m); break;
    case State::Suspect:
        ++m_stats.suspicions;
        emit(Event::Kind::Suspect, m);
        break;
    case State::Dead:
        ++m_stats.deaths;
        emit(Event::Kind::Dead, m);
        break;
    }
}

// A rumour that we are suspect or dead (or alive at an incarnation we never had) is answered by
// outbidding it: only our own incarnation counter can clear our name.
bool Node::refute(const Update& u) {
    const bool threat = u.state == State::Alive ? u.incarnation > m_incarnation : u.incarnation >= m_incarnation;
    if (!threat)
        return false;
    // Far above anything we said: forged, and nobody who holds us believes it (apply() bounds
    // their step too). Outbidding it would only spend our incarnations towards saturation.
    if (u.incarnation > m_incarnation && u.incarnation - m_incarnation > kMaxIncarnationStep) {
        ++m_stats.incarnation_jumps;
        return false;
    }
    m_incarnation = u.incarnation == UINT32_MAX ? UINT32_MAX : u.incarnation + 1;
    Member& self = m_members.at(0);
    self.incarnation = m_incarnation;
    ++m_generation;
    ++m_stats.refutations;
    m_gossip.push(update_of(0));
    emit(Event::Kind::Refuted, self);
    return true;
}

bool Node::apply(const Update& u, uint64_t now_ns) {
    if (u.name.view() == m_self.view())
        return refute(u);
    int found = m_members.find(u.name.view());
    if (found < 0) {
        // Suspect or dead news about a stranger tells us nothing we could act on.
        if (u.state != State::Alive)
            return false;
        int slot = m_members.add(u.name.view(), u.addr, u.incarnation, now_ns);
        if (slot < 0) {
            ++m_stats.table_full;
            return false;
        }
        ++m_generation;
        emit(Event::Kind::Joined, m_members.at(size_t(slot)));
        m_gossip.push(u);
        return false;
    }
    const size_t i = size_t(found);
    Member& m = m_members.at(i);
    const uint32_t j = m.incarnation;
    if (u.incarnation > j && u.incarnation - j > kMaxIncarnationStep) {
        ++m_stats.incarnation_jumps;
        return false;
    }
    bool wins = false;
    switch (u.state) {
    case State::Alive: wins = u.incarnation > j; break;
    case State::Suspect:
        wins = (m.state == State::Alive && u.incarnation >= j) || (m.state == State::Suspect && u.incarnation > j);
        break;
    case State::Dead: wins = u.incarnation >= j && !(m.state == State::Dead && u.incarnation == j); break;
    }
    if (!wins)
        return false;
    if (u.state == State::Alive && !(m.addr == u.addr)) {
        m.addr = u.addr;
    }
    set_state(i, u.state, u.incarnation, now_ns);
    m_gossip.push(update_of(i));
    return false;
}

// A boot id's time far ahead of our own clock cannot be an honest peer's; without a wall clock of
// our own (boot time 0) there is nothing to judge by.
bool Node::plausible_boot(uint64_t boot_id, uint64_t now_ns) {
    if (!m_have_origin) {
        m_have_origin = true;
        m_origin_ns = now_ns;
    }
    const uint64_t own_ms = boot_time_ms(m_boot_id);
    if (own_ms == 0)
        return true;
    const uint64_t now_ms = own_ms + (now_ns >= m_origin_ns ? (now_ns - m_origin_ns) / 1000000ull : 0);
    return boot_time_ms(boot_id) <= now_ms + kMaxBootSkewMs;
}

// The sender's first datagram of a later boot (or the first one we hear from it at all): it is
// alive now, at the incarnation it claims, whatever we held about an earlier life. This is how a
// member declared dead at an incarnation it cannot outbid (saturated, or beyond the step a
// restarted node may refute by) comes back: death ends at a boot boundary.
void Node::reborn(size_t i, Address from, uint64_t now_ns) {
    Member& m = m_members.at(i);
    if (m.state == State::Alive && m.incarnation == m_in.incarnation && m.addr == from)
        return;
    m.addr = from;
    set_state(i, State::Alive, m_in.incarnation, now_ns);
    m_gossip.push(update_of(i));
}

void Node::handle_ack(size_t sender, uint64_t now_ns, Transport& t) {
    const Name& subject = m_in.target;
    if (m_probe.active && !m_probe.acked && m_in.seq == m_probe.seq && subject.view() == m_probe.target.view()) {
        m_probe.acked = true;
        if (name_of(m_members.at(sender)) == subject.view())
            m_members.at(sender).rtt_ns = now_ns - m_probe.start_ns;
    }
    for (Relay& r : m_relays) {
        if (r.used && r.seq == m_in.seq && r.target.view() == subject.view()) {
            r.used = false;
            send(t, r.origin, MessageType::Ack, r.origin_seq, subject.view(), Address {}, -1, Fill::None);
        }
    }
    for (PendingPing& p : m_pings) {
        if (p.status == PingResult::Status::Pending && p.seq == m_in.seq && p.target.view() == subject.view()) {
            p.status = PingResult::Status::Answered;
            p.rtt_ns = now_ns - p.sent_ns;
        }
    }
}

Verdict Node::receive(Address from, std::span<const uint8_t> datagram, uint64_t now_ns, Transport& t) {
    ++m_stats.received;
    if (!m_valid)
        return Verdict::Malformed;
    Verdict v = decode(datagram, m_key, m_in);
    if (v == Verdict::Accepted && m_in.sender.view() == m_self.view())
        v = Verdict::FromSelf;
    if (v == Verdict::Accepted && !plausible_boot(m_in.boot_id, now_ns))
        v = Verdict::Replayed;
    int found = v == Verdict::Accepted ? m_members.find(m_in.sender.view()) : -1;
    ReplayWindow::Fresh fresh = ReplayWindow::Fresh::Current;
    bool restarted = false;
    if (v == Verdict::Accepted && found >= 0) {
        ReplayWindow& w = m_members.window(size_t(found));
        restarted = w.started();
        fresh = w.accept(m_in.boot_id, m_in.counter);
        if (fresh == ReplayWindow::Fresh::No)
            v = Verdict::Replayed;
    }
    if (v == Verdict::Accepted && found < 0) {
        // A stranger speaking for itself: it joins with what its header claims.
        found = m_members.add(m_in.sender.view(), from, m_in.incarnation, now_ns);
        if (found < 0) {
            v = Verdict::TableFull;
        } else {
            m_members.window(size_t(found)).accept(m_in.boot_id, m_in.counter);
            ++m_generation;
            emit(Event::Kind::Joined, m_members.at(size_t(found)));
            m_gossip.push(update_of(size_t(found)));
        }
    }
    if (v != Verdict::Accepted) {
        refuse(from, v, now_ns);
        return v;
    }
    ++m_stats.accepted;
    const size_t sender = size_t(found);
    m_members.at(sender).last_heard_ns = now_ns;
    if (fresh == ReplayWindow::Fresh::NewBoot) {
        if (restarted)
            ++m_stats.restarts;
        reborn(sender, from, now_ns);
    }

    // The header is the sender's own claim to be alive at its incarnation, from where it spoke.
    Update claim;
    claim.name = m_in.sender;
    claim.addr = from;
    claim.incarnation = m_in.incarnation;
    apply(claim, now_ns);
    bool refuted = false;
    for (size_t i = 0; i < m_in.update_count; ++i)
        refuted |= apply(m_in.updates[i], now_ns);
    // Dead to us yet talking: tell it (send() puts our view of the recipient first) so it refutes.
    bool must_answer = refuted;
    if (m_members.at(sender).state == State::Dead) {
        uint64_t& told = m_members.told_dead_ns(sender);
        const uint64_t period = uint64_t(m_config.period_ms) * 1000000ull;
        if (told == 0 || now_ns < told || now_ns - told >= period) {
            told = now_ns;
            must_answer = true;
        }
    }

    switch (m_in.type) {
    case MessageType::Ping:
        if (m_in.target.view() == m_self.view()) {
            send(t, from, MessageType::Ack, m_in.seq, m_self.view(), Address {}, int(sender), Fill::Some);
            must_answer = false;
        }
        break;
    case MessageType::Ack: handle_ack(sender, now_ns, t); break;
    case MessageType::PingReq: {
        Relay* slot = nullptr;
        for (Relay& r : m_relays)
            if (!r.used || r.expires_ns <= now_ns)
                slot = &r;
        if (slot && !(m_in.target.view() == m_self.view())) {
            *slot = Relay { true, next_seq(),  m_in.seq,
                            from, m_in.target, now_ns + uint64_t(m_config.period_ms) * 1000000ull };
            int target = m_members.find(m_in.target.view());
            send(t, m_in.target_addr, MessageType::Ping, slot->seq, m_in.target.view(), Address {}, target, Fill::None);
        }
        break;
    }
    case MessageType::Announce:
        send(t, from, MessageType::Ack, m_in.seq, m_self.view(), Address {}, int(sender), Fill::All);
        must_answer = false;
        break;
    }
    if (must_answer)
        send(t, from, MessageType::Announce, next_seq(), {}, Address {}, int(sender), Fill::None);
    return Verdict::Accepted;
}

Node::PingResult Node::ping_result(uint32_t id) const {
    for (const PendingPing& p : m_pings)
        if (p.id == id && p.status != PingResult::Status::Unknown)
            return PingResult { p.status, p.rtt_ns };
    return PingResult {};
}

} // namespace cluster

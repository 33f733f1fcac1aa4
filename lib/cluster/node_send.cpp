// Building, tagging and sending one message, with its piggy-backed updates.
#include "node.h"

namespace cluster {

// Beyond the gossip queue, spare room carries table entries taken round-robin: this is how a
// newcomer learns the whole table from a few announcement replies, and how news whose
// retransmissions all got lost still reaches everyone eventually.
size_t Node::fill_updates(size_t n, Fill fill) {
    size_t budget = fill == Fill::All ? kMaxUpdates : fill == Fill::Some ? kSomeFill : 0;
    const size_t count = m_members.size();
    for (size_t step = 0; step < count && budget > 0 && n < kMaxUpdates; ++step) {
        m_fill_cursor = (m_fill_cursor + 1) % count;
        m_out.updates[n++] = update_of(m_fill_cursor);
        --budget;
    }
    return n;
}

void Node::send(Transport& t, Address to, MessageType type, uint32_t seq, std::string_view target, Address target_addr,
                int recipient, Fill fill) {
    if (!m_valid || to.ip == 0 || to.port == 0)
        return;
    m_out.type = type;
    m_out.sender = m_self;
    m_out.incarnation = m_incarnation;
    m_out.boot_id = m_boot_id;
    m_out.counter = ++m_counter;
    m_out.seq = seq;
    m_out.target = Name {};
    if (!target.empty())
        m_out.target.set(target);
    m_out.target_addr = target_addr;
    size_t n = 0;
    // A recipient we hold as suspect or dead hears so first: it is the one that can refute it.
    if (recipient > 0 && size_t(recipient) < m_members.size() && m_members.at(size_t(recipient)).state != State::Alive)
        m_out.updates[n++] = update_of(size_t(recipient));
    n += m_gossip.take(m_out.updates + n, kMaxUpdates - n, retransmit_limit(m_config, m_members.live_count()));
    n = fill_updates(n, fill);
    m_out.update_count = uint8_t(n);
    const size_t len = encode(m_out, m_key, m_buffer);
    if (len == 0)
        return;
    ++m_stats.sent;
    t.send(to, std::span<const uint8_t>(m_buffer, len));
}

} // namespace cluster

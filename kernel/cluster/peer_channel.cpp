#include "peer_channel.h"

#include "../mm/kheap.h"
#include <abi/sys.h>

#include <new>

namespace clusterd {

bool send_sealed(uint32_t slot, uint32_t ip, uint16_t port, raftwire::FrameHeader h, std::span<const uint8_t> message,
                 raftwire::Key key, bool wait_for_room) {
    h.fragments = static_cast<uint16_t>(raftwire::fragment_count(message.size()));
    h.total = static_cast<uint32_t>(message.size());
    uint8_t datagram[raftwire::kMaxDatagram];
    for (uint16_t f = 0; f < h.fragments; ++f) {
        h.fragment = f;
        const size_t n = raftwire::seal(h, message, key, datagram);
        if (n == 0)
            return false;
        int64_t sent = sys::udp_send(slot, ip, port, datagram, n);
        for (int tries = 0; wait_for_room && sent == -static_cast<int64_t>(ktl::Error::Full) && tries < 50; ++tries) {
            sys::sleep_ns(200'000); // (the net task empties the ring as it runs)
            sent = sys::udp_send(slot, ip, port, datagram, n);
        }
    }
    return true;
}

bool PeerChannel::start(uint32_t slot, uint16_t port, Resolver resolve, uint64_t self, raftwire::Key key,
                        uint64_t epoch) {
    if (!resolve)
        return false;
    m_slot = slot;
    m_port = port;
    m_resolve = resolve;
    m_self = self;
    m_key = key;
    m_epoch = epoch;
    forget_peers();
    m_seq = m_clock = 0;
    return true;
}

void PeerChannel::forget_peers() {
    for (size_t i = 0; i < m_peer_count; ++i) {
        m_peers[i].in->~Reassembler();
        kheap::free(m_peers[i].in);
    }
    m_peer_count = 0;
}

PeerChannel::Peer* PeerChannel::peer(uint64_t id) {
    for (size_t i = 0; i < m_peer_count; ++i)
        if (m_peers[i].id == id)
            return &m_peers[i];
    if (id == 0 || id == m_self)
        return nullptr;
    size_t at = m_peer_count;
    void* mem = nullptr;
    if (at == kMaxPeers) { // (its buffer is taken over by the newcomer)
        at = 0;
        for (size_t i = 1; i < m_peer_count; ++i)
            if (m_peers[i].heard < m_peers[at].heard)
                at = i;
        m_peers[at].in->~Reassembler();
        mem = m_peers[at].in;
    } else {
        auto got = kheap::alloc(sizeof(raftwire::Reassembler) + kMaxMessage);
        if (!got)
            return nullptr;
        mem = *got;
        ++m_peer_count;
    }
    auto* storage = static_cast<uint8_t*>(mem) + sizeof(raftwire::Reassembler);
    auto* in = new (mem) raftwire::Reassembler({ storage, kMaxMessage });
    m_peers[at] = Peer { id, in, m_clock };
    return &m_peers[at];
}

bool PeerChannel::send(uint64_t to, std::span<const uint8_t> message) {
    const uint32_t ip = m_resolve ? m_resolve(to) : 0;
    if (ip == 0 || to == m_self || message.empty() || message.size() > kMaxMessage)
        return false;
    raftwire::FrameHeader h;
    h.group = m_group;
    h.from = m_self;
    h.to = to;
    h.epoch = m_epoch;
    h.seq = ++m_seq;
    if (!send_sealed(m_slot, ip, m_port, h, message, m_key))
        return false;
    ++m_counters.sent;
    return true;
}

bool PeerChannel::receive(std::span<const uint8_t> datagram, std::span<const uint8_t>& message, uint64_t& from_id) {
    raftwire::FrameHeader h;
    std::span<const uint8_t> slice;
    Peer* from = nullptr;
    if (raftwire::open(datagram, m_key, h, slice) != raftwire::Verdict::Accepted || h.group != m_group ||
        h.to != m_self || !(from = peer(h.from))) {
        ++m_counters.refused;
        return false;
    }
    if (from->in->feed(h, slice) != raftwire::Reassembler::Result::Complete)
        return false;
    message = from->in->message();
    from_id = h.from;
    from->heard = ++m_clock;
    ++m_counters.received;
    return true;
}

} // namespace clusterd

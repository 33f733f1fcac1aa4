#pragma once
// Freshness per sender. Every datagram carries, under the MAC, the sender's boot id and a
// counter numbering its datagrams within that boot.
//
// A boot id only grows from one boot of a node to the next: the wall-clock time of the boot in
// milliseconds in its high bits, 16 random bits below (two nodes, or two boots within the same
// millisecond, still differ). So a receiver needs no memory of earlier boots and no handshake:
// it keeps, per peer, the highest boot id it has seen and refuses anything lower. A datagram
// captured during any earlier boot is never accepted again, however the captures are rotated,
// and the current boot keeps a window of the last 64 counters so that datagrams may arrive out
// of order without any of them counting twice. A handshake (challenge-response on every new
// boot id) was the alternative; it needs no clock but costs a round trip and state per pending
// challenge on every restart, and diskless swarm nodes all have a wall clock (the RTC, `clock=`
// or SNTP) anyway.
//
// What this does not cover: a node whose clock goes backwards between two boots (or that boots
// twice within the error of its clock, about a second with the RTC) speaks under a boot id its
// peers hold as stale and is refused by those that saw the later one, until they forget it (its
// table slot is reused); a receiver that restarts, or forgot the peer, accepts one earlier boot's
// captures until the peer's current boot speaks to it (then that boot wins for good).
#include <cstdint>

namespace cluster {

constexpr uint64_t make_boot_id(uint64_t unix_ms, uint64_t random) { return (unix_ms << 16) | (random & 0xffff); }
constexpr uint64_t boot_time_ms(uint64_t boot_id) { return boot_id >> 16; }

class ReplayWindow {
public:
    enum class Fresh : uint8_t {
        No,      // an earlier boot, or a counter of this boot already seen or too old
        Current, // a new counter of the boot already known
        NewBoot, // the first datagram of a later boot (or the first one heard at all)
    };
    Fresh accept(uint64_t boot_id, uint64_t counter);
    bool started() const { return m_started; }
    uint64_t boot_id() const { return m_boot; }
    void reset() { *this = ReplayWindow {}; }

private:
    static constexpr uint64_t kWindow = 64;
    bool m_started = false;
    uint64_t m_boot = 0;
    uint64_t m_highest = 0;
    uint64_t m_seen = 0; // bit i: counter m_highest - i was seen
};

} // namespace cluster

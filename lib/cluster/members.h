#pragma once
// The member table: a fixed array of kMaxMembers slots, self in slot 0. Slots are never moved,
// only reused (a new member may take the slot of the member dead the longest), so an index
// stays valid for the caller of Node::member() between changes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <cluster/replay.h>
#include <cluster/types.h>

namespace cluster {

class MemberTable {
public:
    void init_self(std::string_view name, Address addr, uint32_t incarnation, uint64_t now_ns);
    size_t size() const { return m_count; }
    Member& at(size_t i) { return m_members[i]; }
    const Member& at(size_t i) const { return m_members[i]; }
    ReplayWindow& window(size_t i) { return m_windows[i]; }
    // When we last told this member (held dead) so: at most once a period, or a member that
    // cannot refute (its incarnation saturated) would ping-pong with us at network speed.
    uint64_t& told_dead_ns(size_t i) { return m_told_dead_ns[i]; }
    // Slot index, or -1.
    int find(std::string_view name) const;
    // A slot for a new Alive member: a free one, else the one dead the longest (its record and
    // replay window are forgotten); -1 when every member is alive or suspect.
    int add(std::string_view name, Address addr, uint32_t incarnation, uint64_t now_ns);
    // Members not dead, self included: the n of the protocol's timeouts and retransmit counts.
    size_t live_count() const;

private:
    Member m_members[kMaxMembers];
    ReplayWindow m_windows[kMaxMembers];
    uint64_t m_told_dead_ns[kMaxMembers] = {};
    size_t m_count = 0;
};

std::string_view name_of(const Member& m);

} // namespace cluster

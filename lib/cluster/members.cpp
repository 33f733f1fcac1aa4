#include "members.h"

namespace cluster {

std::string_view name_of(const Member& m) {
    size_t n = 0;
    while (n < kMaxNameLen && m.name[n])
        ++n;
    return { m.name, n };
}

namespace {

void fill(Member& m, std::string_view name, Address addr, uint32_t incarnation, uint64_t now_ns) {
    m = Member {};
    size_t n = name.size() < kMaxNameLen ? name.size() : kMaxNameLen;
    for (size_t i = 0; i < n; ++i)
        m.name[i] = name[i];
    m.addr = addr;
    m.state = State::Alive;
    m.incarnation = incarnation;
    m.state_since_ns = now_ns;
}

} // namespace

void MemberTable::init_self(std::string_view name, Address addr, uint32_t incarnation, uint64_t now_ns) {
    fill(m_members[0], name, addr, incarnation, now_ns);
    m_windows[0].reset();
    m_count = 1;
}

int MemberTable::find(std::string_view name) const {
    for (size_t i = 0; i < m_count; ++i)
        if (name_of(m_members[i]) == name)
            return int(i);
    return -1;
}

int MemberTable::add(std::string_view name, Address addr, uint32_t incarnation, uint64_t now_ns) {
    size_t slot = m_count;
    if (m_count == kMaxMembers) {
        slot = 0;
        for (size_t i = 1; i < m_count; ++i) {
            const Member& m = m_members[i];
            if (m.state == State::Dead && (slot == 0 || m.state_since_ns < m_members[slot].state_since_ns))
                slot = i;
        }
        if (slot == 0)
            return -1;
    } else {
        ++m_count;
    }
    fill(m_members[slot], name, addr, incarnation, now_ns);
    m_windows[slot].reset();
    m_told_dead_ns[slot] = 0;
    return int(slot);
}

size_t MemberTable::live_count() const {
    size_t n = 0;
    for (size_t i = 0; i < m_count; ++i)
        if (m_members[i].state != State::Dead)
            ++n;
    return n;
}

} // namespace cluster

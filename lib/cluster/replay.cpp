#include "replay.h"

namespace cluster {

ReplayWindow::Fresh ReplayWindow::accept(uint64_t boot_id, uint64_t counter) {
    if (m_started && boot_id < m_boot)
        return Fresh::No;
    if (!m_started || boot_id > m_boot) {
        m_started = true;
        m_boot = boot_id;
        m_highest = counter;
        m_seen = 1;
        return Fresh::NewBoot;
    }
    if (counter > m_highest) {
        const uint64_t shift = counter - m_highest;
        m_seen = shift >= kWindow ? 1 : (m_seen << shift) | 1;
        m_highest = counter;
        return Fresh::Current;
    }
    const uint64_t age = m_highest - counter;
    if (age >= kWindow)
        return Fresh::No;
    const uint64_t bit = uint64_t(1) << age;
    if (m_seen & bit)
        return Fresh::No;
    m_seen |= bit;
    return Fresh::Current;
}

} // namespace cluster

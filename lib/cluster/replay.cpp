#include "replay.h"

namespace cluster {

bool ReplayWindow::accept(uint64_t boot_nonce, uint64_t counter) {
    if (m_started && boot_nonce != m_nonce) {
        if (m_has_previous && boot_nonce == m_previous_nonce)
            return false;
        m_previous_nonce = m_nonce;
        m_has_previous = true;
        m_started = false;
    }
    if (!m_started) {
        m_started = true;
        m_nonce = boot_nonce;
        m_highest = counter;
        m_seen = 1;
        return true;
    }
    if (counter > m_highest) {
        const uint64_t shift = counter - m_highest;
        m_seen = shift >= kWindow ? 1 : (m_seen << shift) | 1;
        m_highest = counter;
        return true;
    }
    const uint64_t age = m_highest - counter;
    if (age >= kWindow)
        return false;
    const uint64_t bit = uint64_t(1) << age;
    if (m_seen & bit)
        return false;
    m_seen |= bit;
    return true;
}

} // namespace cluster

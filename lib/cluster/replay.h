#pragma once
// Anti-replay per sender: every sender numbers its datagrams (counter) within one boot (boot
// nonce). A window of the last 64 counters lets datagrams arrive out of order without letting
// any of them count twice.
#include <cstdint>

namespace cluster {

class ReplayWindow {
public:
    // True when (nonce, counter) was not seen before and is now recorded. A new boot nonce is a
    // restart: it starts a fresh window, but the previous boot's nonce stays refused, so its
    // captured datagrams cannot pose as yet another restart.
    bool accept(uint64_t boot_nonce, uint64_t counter);
    void reset() { *this = ReplayWindow{}; }

private:
    static constexpr uint64_t kWindow = 64;
    bool m_started = false;
    uint64_t m_nonce = 0;
    uint64_t m_previous_nonce = 0;
    bool m_has_previous = false;
    uint64_t m_highest = 0;
    uint64_t m_seen = 0; // bit i: counter m_highest - i was seen
};

} // namespace cluster

#include "auth_gate.h"

#include <crypto/sha256.h>

namespace mcp {

uint64_t AuthGate::fingerprint(std::string_view key) { return fingerprint(crypto::Sha256::hash(key)); }

uint64_t AuthGate::fingerprint(const crypto::Digest& digest) {
    uint64_t fp = 0;
    for (int i = 0; i < 8; ++i)
        fp = (fp << 8) | digest[i];
    return fp | 1; // never 0, the empty slot
}

AuthGate::Source& AuthGate::source(uint64_t id, uint64_t now_ns) {
    for (auto& s : m_sources)
        if (s.used && s.id == id) {
            s.seen_ns = now_ns;
            return s;
        }
    Source* slot = &m_sources[0]; // a free slot, else the source seen least recently
    for (auto& s : m_sources) {
        if (!s.used) {
            slot = &s;
            break;
        }
        if (s.seen_ns < slot->seen_ns)
            slot = &s;
    }
    *slot = Source {};
    slot->used = true;
    slot->id = id;
    slot->milli_tokens = uint64_t(m_config.burst) * 1000;
    slot->refilled_ns = now_ns;
    slot->seen_ns = now_ns;
    return *slot;
}

void AuthGate::refill(Source& s, uint64_t now_ns) const {
    if (now_ns > s.refilled_ns) {
        uint64_t elapsed = now_ns - s.refilled_ns;
        if (elapsed > 1'000'000'000'000ull)
            elapsed = 1'000'000'000'000ull; // past any burst anyway; keeps the product in range
        s.milli_tokens += elapsed * m_config.per_second / 1'000'000;
        if (s.milli_tokens > uint64_t(m_config.burst) * 1000)
            s.milli_tokens = uint64_t(m_config.burst) * 1000;
    }
    s.refilled_ns = now_ns;
}

bool AuthGate::admit(uint64_t id, uint64_t key_fp, uint64_t now_ns) {
    Source& s = source(id, now_ns);
    refill(s, now_ns);
    if (s.milli_tokens >= 1000)
        return true;
    for (uint64_t good : s.good)
        if (good == key_fp)
            return true;
    ++m_refused;
    return false;
}

void AuthGate::failed(uint64_t id, uint64_t now_ns) {
    Source& s = source(id, now_ns);
    refill(s, now_ns);
    s.milli_tokens = s.milli_tokens >= 1000 ? s.milli_tokens - 1000 : 0;
    ++m_failures;
}

void AuthGate::succeeded(uint64_t id, uint64_t key_fp, uint64_t now_ns) {
    Source& s = source(id, now_ns);
    for (uint64_t good : s.good)
        if (good == key_fp)
            return;
    s.good[s.next_good++ % kGoodKeys] = key_fp;
}

} // namespace mcp

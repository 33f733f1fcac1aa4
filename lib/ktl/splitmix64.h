#pragma once
// SplitMix64 (Steele, Lea, Flood 2014): the project's one seeded integer generator, for whatever
// must replay exactly from a seed on x86_64 and AArch64 alike (HNSW levels, the cluster
// protocol's probe order, the swarm fabric's losses). Not for secrets: that is the kernel's
// ChaCha20 generator.
#include <cstdint>

namespace ktl {

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed = 0) : m_state(seed) {}

    uint64_t next() {
        uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

    // Uniform in [0, bound) by rejection, so small bounds carry no modulo bias; bound 0 gives 0.
    uint64_t below(uint64_t bound) {
        if (bound == 0)
            return 0;
        const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
        for (int tries = 0; tries < 64; ++tries) {
            uint64_t x = next();
            if (x < limit)
                return x % bound;
        }
        return next() % bound; // 2^-64-ish odds of reaching here; a tiny bias beats a loop without end
    }

    uint64_t state() const { return m_state; }
    void set_state(uint64_t s) { m_state = s; }

private:
    uint64_t m_state;
};

} // namespace ktl

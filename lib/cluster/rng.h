#pragma once
// SplitMix64 (Steele, Lea, Flood 2014): the node's only source of randomness (probe order,
// ping-req helpers), seeded by the caller so a simulated swarm replays exactly.
#include <cstdint>

namespace cluster {

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : m_state(seed) {}

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

private:
    uint64_t m_state;
};

} // namespace cluster

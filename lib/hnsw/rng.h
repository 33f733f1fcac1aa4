#pragma once
// Seeded integer PRNG for node levels (SplitMix64, Steele et al. 2014). Integer only, so the
// same seed and the same inserts give the same levels on x86_64 and AArch64; the state is
// one uint64_t and is stored in snapshots.
#include <cstdint>

#include <hnsw/limits.h>
#include <ktl/splitmix64.h>

namespace hnsw {

class Rng {
public:
    explicit Rng(uint64_t seed = 0) : m_gen(seed) {}

    uint64_t next() { return m_gen.next(); }

    // Level with P(level >= l) = M^-l, the distribution of the paper's mL = 1/ln(M), but
    // drawn as repeated integer trials instead of floor(-ln(U) * mL).
    uint32_t level(uint32_t m) {
        const uint64_t threshold = ~0ull / m;
        uint32_t l = 0;
        while (l < kMaxLevel && next() < threshold)
            ++l;
        return l;
    }

    uint64_t state() const { return m_gen.state(); }
    void set_state(uint64_t s) { m_gen.set_state(s); }

private:
    ktl::SplitMix64 m_gen;
};

} // namespace hnsw

#pragma once
// ChaCha20 (RFC 8439) and a random generator built on it. Hardware-free: the kernel seeds the
// generator from whatever entropy the board has (kernel/random.cpp); host tests check the block
// function against the RFC and the generator's properties.
#include <cstddef>
#include <cstdint>

namespace crypto {

// One 64-byte keystream block for (key, counter, nonce): RFC 8439, 2.3.
void chacha20_block(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12], uint8_t out[64]);

// A deterministic random bit generator: ChaCha20 keystream under a secret key, with "fast key
// erasure" (the first 32 bytes of every request's keystream become the next key, so the state
// after a request says nothing about what it returned). reseed() mixes new entropy into the
// key through SHA-256 of (key, entropy). Not thread-safe; the kernel serialises calls.
class ChaChaRng {
public:
    void seed(const uint8_t* entropy, size_t len);
    void reseed(const uint8_t* entropy, size_t len);
    void fill(uint8_t* out, size_t len);
    bool seeded() const { return m_seeded; }
    uint64_t bytes_since_reseed() const { return m_since_reseed; }

private:
    uint8_t m_key[32] = {};
    uint64_t m_requests = 0; // the nonce: never repeats under one key
    uint64_t m_since_reseed = 0;
    bool m_seeded = false;
};

} // namespace crypto

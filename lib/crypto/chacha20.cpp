#include "chacha20.h"

#include "sha256.h"

namespace crypto {
namespace {

constexpr uint32_t rotl(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

void quarter(uint32_t* s, int a, int b, int c, int d) {
    s[a] += s[b];
    s[d] = rotl(s[d] ^ s[a], 16);
    s[c] += s[d];
    s[b] = rotl(s[b] ^ s[c], 12);
    s[a] += s[b];
    s[d] = rotl(s[d] ^ s[a], 8);
    s[c] += s[d];
    s[b] = rotl(s[b] ^ s[c], 7);
}

uint32_t load32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

void wipe(void* p, size_t n) {
    auto* v = static_cast<volatile uint8_t*>(p);
    for (size_t i = 0; i < n; ++i)
        v[i] = 0;
}

} // namespace

void chacha20_block(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12], uint8_t out[64]) {
    uint32_t init[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 }; // "expand 32-byte k"
    for (int i = 0; i < 8; ++i)
        init[4 + i] = load32(key + 4 * i);
    init[12] = counter;
    for (int i = 0; i < 3; ++i)
        init[13 + i] = load32(nonce + 4 * i);
    uint32_t s[16];
    for (int i = 0; i < 16; ++i)
        s[i] = init[i];
    for (int round = 0; round < 10; ++round) { // 20 rounds: a column and a diagonal round each
        quarter(s, 0, 4, 8, 12);
        quarter(s, 1, 5, 9, 13);
        quarter(s, 2, 6, 10, 14);
        quarter(s, 3, 7, 11, 15);
        quarter(s, 0, 5, 10, 15);
        quarter(s, 1, 6, 11, 12);
        quarter(s, 2, 7, 8, 13);
        quarter(s, 3, 4, 9, 14);
    }
    for (int i = 0; i < 16; ++i) {
        uint32_t v = s[i] + init[i];
        out[4 * i] = uint8_t(v);
        out[4 * i + 1] = uint8_t(v >> 8);
        out[4 * i + 2] = uint8_t(v >> 16);
        out[4 * i + 3] = uint8_t(v >> 24);
    }
    wipe(s, sizeof s);
    wipe(init, sizeof init);
}

void ChaChaRng::seed(const uint8_t* entropy, size_t len) {
    wipe(m_key, sizeof m_key);
    m_seeded = false;
    reseed(entropy, len);
}

void ChaChaRng::reseed(const uint8_t* entropy, size_t len) {
    Sha256 h;
    h.update({ m_key, sizeof m_key });
    h.update({ entropy, len });
    auto digest = h.finish();
    for (size_t i = 0; i < sizeof m_key; ++i)
        m_key[i] = digest[i];
    wipe(digest.data(), digest.size());
    m_since_reseed = 0;
    m_seeded = true;
}

void ChaChaRng::fill(uint8_t* out, size_t len) {
    uint8_t nonce[12] = {};
    uint64_t n = ++m_requests;
    for (int i = 0; i < 8; ++i)
        nonce[i] = uint8_t(n >> (8 * i));
    uint8_t block[64];
    // Block 0 gives the next key (never returned); blocks 1.. give the output.
    chacha20_block(m_key, 0, nonce, block);
    uint8_t next_key[32];
    for (int i = 0; i < 32; ++i)
        next_key[i] = block[i];
    uint32_t counter = 1;
    for (size_t done = 0; done < len; ++counter) {
        chacha20_block(m_key, counter, nonce, block);
        size_t take = len - done < sizeof block ? len - done : sizeof block;
        for (size_t i = 0; i < take; ++i)
            out[done + i] = block[i];
        done += take;
    }
    for (int i = 0; i < 32; ++i)
        m_key[i] = next_key[i];
    wipe(next_key, sizeof next_key);
    wipe(block, sizeof block);
    m_since_reseed += len;
}

} // namespace crypto

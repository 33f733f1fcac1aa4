#include "hmac_sha256.h"

namespace crypto {

void wipe(void* p, size_t n) {
    volatile uint8_t* bytes = static_cast<volatile uint8_t*>(p);
    for (size_t i = 0; i < n; ++i)
        bytes[i] = 0;
}

HmacSha256::HmacSha256(std::span<const uint8_t> key) {
    uint8_t block[kBlock] = {};
    if (key.size() > kBlock) {
        Sha256 h;
        h.update(key);
        Digest d = h.finish();
        for (size_t i = 0; i < d.size(); ++i)
            block[i] = d[i];
        wipe(d.data(), d.size());
        wipe(&h, sizeof h);
    } else {
        for (size_t i = 0; i < key.size(); ++i)
            block[i] = key[i];
    }
    uint8_t inner_pad[kBlock];
    for (size_t i = 0; i < kBlock; ++i) {
        inner_pad[i] = uint8_t(block[i] ^ 0x36);
        m_outer_pad[i] = uint8_t(block[i] ^ 0x5c);
    }
    m_inner.update(std::span<const uint8_t>(inner_pad, kBlock));
    wipe(inner_pad, kBlock);
    wipe(block, kBlock);
}

HmacSha256::~HmacSha256() {
    wipe(m_outer_pad, kBlock);
    // The hash state after the inner pad is a key equivalent too (it lets anyone finish MACs).
    wipe(&m_inner, sizeof m_inner);
}

Digest HmacSha256::finish() {
    Digest inner = m_inner.finish();
    Sha256 outer;
    outer.update(std::span<const uint8_t>(m_outer_pad, kBlock));
    outer.update(inner);
    Digest tag = outer.finish();
    wipe(&outer, sizeof outer);
    return tag;
}

Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> data) {
    HmacSha256 mac(key);
    mac.update(data);
    return mac.finish();
}

} // namespace crypto

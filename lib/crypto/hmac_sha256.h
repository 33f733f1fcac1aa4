#pragma once
// HMAC-SHA256 (RFC 2104): authenticates the cluster's datagrams and derives the cluster key
// from an operator's secret. Portable, allocation-free, streaming.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <crypto/sha256.h>

namespace crypto {

class HmacSha256 {
public:
    // Any length; a key longer than one block is replaced by its hash, as the RFC says.
    explicit HmacSha256(std::span<const uint8_t> key);
    ~HmacSha256();
    HmacSha256(const HmacSha256&) = delete;
    HmacSha256& operator=(const HmacSha256&) = delete;

    void update(std::span<const uint8_t> data) { m_inner.update(data); }
    void update(std::string_view text) { m_inner.update(text); }
    Digest finish(); // once per object

private:
    static constexpr size_t kBlock = 64;
    Sha256 m_inner;
    // The outer pad is needed again at finish(), so it outlives the constructor; it is as
    // secret as the key itself and is wiped with the rest.
    uint8_t m_outer_pad[kBlock];
};

Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> data);

// Overwrites through a volatile pointer, which the compiler may not drop as a dead store.
void wipe(void* p, size_t n);

} // namespace crypto

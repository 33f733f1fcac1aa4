#pragma once
// SHA-256 (FIPS 180-4). Used to store API keys hashed and to bind execution tokens to the
// validated arguments of one call. Portable, allocation-free, streaming.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace crypto {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
public:
    Sha256() { reset(); }
    void reset();
    void update(std::span<const uint8_t> data);
    void update(std::string_view text) { update({ reinterpret_cast<const uint8_t*>(text.data()), text.size() }); }
    Digest finish(); // the object must be reset() before reuse

    static Digest hash(std::string_view text) {
        Sha256 h;
        h.update(text);
        return h.finish();
    }

private:
    void block(const uint8_t* p);
    uint32_t m_state[8];
    uint8_t m_buffer[64];
    size_t m_buffered;
    uint64_t m_length; // bytes
};

// Compares without an early exit, so timing does not reveal where two digests differ.
bool equal_constant_time(const Digest& a, const Digest& b);
// Lower-case hex, 64 characters plus NUL.
void to_hex(const Digest& d, char out[65]);

} // namespace crypto

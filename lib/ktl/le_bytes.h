#pragma once
// Little-endian integers at a byte position: every on-disk and on-wire format here is
// little-endian whatever the CPU, so a file written on x86_64 reads the same on AArch64.
#include <cstddef>
#include <cstdint>

namespace ktl {

template <typename T>
constexpr void put_le(std::byte* p, T v) {
    for (size_t i = 0; i < sizeof(T); ++i)
        p[i] = std::byte(uint8_t(uint64_t(v) >> (8 * i)));
}

template <typename T>
constexpr T get_le(const std::byte* p) {
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
        v |= uint64_t(uint8_t(p[i])) << (8 * i);
    return static_cast<T>(v);
}

// The fixed widths by name, as records and batches write their fields.
inline constexpr auto put16 = put_le<uint16_t>;
inline constexpr auto put32 = put_le<uint32_t>;
inline constexpr auto put64 = put_le<uint64_t>;
inline constexpr auto get16 = get_le<uint16_t>;
inline constexpr auto get32 = get_le<uint32_t>;
inline constexpr auto get64 = get_le<uint64_t>;

// The same over uint8_t buffers, `bytes` (at most 8) wide: the wire formats built in uint8_t.
constexpr void put_le(uint8_t* p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i)
        p[i] = uint8_t(v >> (8 * i));
}

constexpr uint64_t get_le(const uint8_t* p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i)
        v |= uint64_t(p[i]) << (8 * i);
    return v;
}

} // namespace ktl

#include "outcome.h"

#include <ktl/le_bytes.h>

namespace raftout {
namespace {

uint64_t get(const uint8_t* p, size_t n) { return ktl::get_le(p, n); }

} // namespace

size_t encode(const Outcome& o, std::span<uint8_t> out) {
    const size_t count = o.absent.size();
    if (count > kMaxFlags || out.size() < bytes(static_cast<uint32_t>(count)))
        return 0;
    auto* b = reinterpret_cast<std::byte*>(out.data());
    const size_t n = bytes(static_cast<uint32_t>(count));
    ktl::put_le<uint64_t>(b, o.origin);
    ktl::put_le<uint64_t>(b + 8, o.ticket);
    ktl::put_le<uint16_t>(b + 16, kOutcome);
    ktl::put_le<uint16_t>(b + 18, 0);
    ktl::put_le<uint32_t>(b + 20, static_cast<uint32_t>(n - kHeader));
    ktl::put_le<uint64_t>(b + 24, static_cast<uint64_t>(o.result));
    ktl::put_le<uint32_t>(b + 32, o.leader);
    ktl::put_le<uint32_t>(b + 36, static_cast<uint32_t>(count));
    for (size_t i = kHeader + kBody; i < n; ++i)
        out[i] = 0;
    for (size_t i = 0; i < count; ++i)
        if (o.absent[i])
            out[kHeader + kBody + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    return n;
}

bool is_outcome(std::span<const uint8_t> in) { return in.size() >= kHeader && get(in.data() + 16, 2) == kOutcome; }

std::optional<Outcome> decode(std::span<const uint8_t> in, std::span<bool> absent) {
    if (in.size() < kHeader + kBody || !is_outcome(in) || get(in.data() + 18, 2) != 0 ||
        get(in.data() + 20, 4) != in.size() - kHeader)
        return std::nullopt;
    const uint64_t count = get(in.data() + 36, 4);
    if (count > kMaxFlags || count > absent.size() || in.size() != bytes(static_cast<uint32_t>(count)))
        return std::nullopt;
    // Bits past `count` in the last byte are zero, as encode() leaves them.
    if (count % 8 != 0 && (in[in.size() - 1] >> (count % 8)) != 0)
        return std::nullopt;
    for (size_t i = 0; i < count; ++i)
        absent[i] = ((in[kHeader + kBody + i / 8] >> (i % 8)) & 1u) != 0;
    Outcome o;
    o.origin = get(in.data(), 8);
    o.ticket = get(in.data() + 8, 8);
    o.result = static_cast<int64_t>(get(in.data() + 24, 8));
    o.leader = static_cast<uint32_t>(get(in.data() + 32, 4));
    o.absent = absent.first(static_cast<size_t>(count));
    return o;
}

} // namespace raftout

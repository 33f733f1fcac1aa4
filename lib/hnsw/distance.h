#pragma once
// Distance kernels. Every implementation uses the same reduction order so that scalar, SSE,
// AVX, AVX-512 and NEON results are bit-identical (host and kernel agree on every distance):
//   - 32 lanes; element i is accumulated into lane i % 32, blocks in increasing order (32
//     lanes = 8 independent 4-wide add chains, enough to hide the add latency on NEON/SSE);
//   - a partial last block behaves as if zero-padded to 32;
//   - lanes are folded as s[j] = a[j] + a[j+16], r[j] = s[j] + s[j+8], t[j] = r[j] + r[j+4],
//     then (t0 + t2) + (t1 + t3);
//   - products and sums are rounded separately (no FMA; the library is built with
//     -ffp-contract=off so the compiler cannot fuse them either).
// L2 is the squared Euclidean distance; the dot-product kernels return 1 - <a, b>, the
// distance used for both inner product and (pre-normalised) cosine.
#include <cstdint>

namespace hnsw {

using DistanceFn = float (*)(const float* a, const float* b, uint32_t n);

enum class Isa : uint8_t { Scalar, Sse, Avx, Avx512, Neon };

struct Kernels {
    DistanceFn l2 = nullptr;
    DistanceFn ip = nullptr; // 1 - dot
    DistanceFn dot = nullptr;
    Isa isa = Isa::Scalar;
};

// False for an instruction set not compiled in or not supported by this CPU.
bool isa_available(Isa isa);
// The kernels of one instruction set (scalar when unavailable).
Kernels kernels_for(Isa isa);
// The fastest available set: AVX-512, AVX (x86 hosts that have them, chosen at run time),
// else SSE, else NEON, else scalar.
Kernels best_kernels();
const char* isa_name(Isa isa);

float l2_scalar(const float* a, const float* b, uint32_t n);
float ip_scalar(const float* a, const float* b, uint32_t n);
// Plain dot product with the same reduction order (used to normalise cosine vectors).
float dot_scalar(const float* a, const float* b, uint32_t n);

} // namespace hnsw

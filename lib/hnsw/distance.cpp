// The reduction order is only portable if products and sums are rounded separately; the
// CMake target passes -ffp-contract=off and this pragma keeps other builds honest.
#pragma GCC optimize("fp-contract=off")

#include <hnsw/distance.h>

#include <cstring>

#include <hnsw/limits.h>

#if defined(__SSE__) || defined(__x86_64__)
#    include <immintrin.h>
#    define HNSW_X86 1
#endif
#if defined(__ARM_NEON)
#    include <arm_neon.h>
#endif
// Runtime AVX / AVX-512 dispatch is a hosted x86 nicety; the kernel never takes this path.
#if defined(HNSW_X86) && defined(__x86_64__) && !defined(__BASALT_KERNEL__) && __STDC_HOSTED__
#    define HNSW_AVX_DISPATCH 1
#endif

namespace hnsw {
namespace {

static_assert(kLanes == 32, "kernels are written for 32 lanes");

constexpr int kL2 = 0;
constexpr int kIp = 1;
constexpr int kDot = 2;

template <int kKind>
inline float finish(float sum) {
    return kKind == kIp ? 1.0f - sum : sum;
}

inline float fold32(const float* a) {
    float s[16];
    for (int j = 0; j < 16; ++j)
        s[j] = a[j] + a[j + 16];
    float r[8];
    for (int j = 0; j < 8; ++j)
        r[j] = s[j] + s[j + 8];
    float t[4];
    for (int j = 0; j < 4; ++j)
        t[j] = r[j] + r[j + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

template <int kKind>
inline float term(float a, float b) {
    if constexpr (kKind == kL2) {
        float d = a - b;
        return d * d;
    } else {
        return a * b;
    }
}

template <int kKind>
float scalar_kernel(const float* a, const float* b, uint32_t n) {
    float acc[32] = {};
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (uint32_t j = 0; j < 32; ++j)
            acc[j] += term<kKind>(a[i + j], b[i + j]);
    for (uint32_t j = 0; i + j < n; ++j)
        acc[j] += term<kKind>(a[i + j], b[i + j]);
    return finish<kKind>(fold32(acc));
}

#if defined(HNSW_X86)
template <int kKind>
inline __m128 sse_term(__m128 a, __m128 b) {
    if constexpr (kKind == kL2) {
        __m128 d = _mm_sub_ps(a, b);
        return _mm_mul_ps(d, d);
    } else {
        return _mm_mul_ps(a, b);
    }
}

// Lanes 0..15 of the 32 as four registers -> the last three fold steps.
inline float sse_fold16(__m128 s0, __m128 s1, __m128 s2, __m128 s3) {
    __m128 t = _mm_add_ps(_mm_add_ps(s0, s2), _mm_add_ps(s1, s3));
    __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));
    return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));
}

template <int kKind>
float sse_kernel(const float* a, const float* b, uint32_t n) {
    __m128 acc[8];
    for (auto& x : acc)
        x = _mm_setzero_ps();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 8; ++k)
            acc[k] = _mm_add_ps(acc[k], sse_term<kKind>(_mm_loadu_ps(a + i + 4 * k), _mm_loadu_ps(b + i + 4 * k)));
    // Partial block: whole quads into their lanes, then the last 1-3 elements zero-padded.
    int k = 0;
    for (; i + 4 <= n; i += 4, ++k)
        acc[k] = _mm_add_ps(acc[k], sse_term<kKind>(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
    if (i < n) {
        float ta[4] = {}, tb[4] = {};
        std::memcpy(ta, a + i, (n - i) * sizeof(float));
        std::memcpy(tb, b + i, (n - i) * sizeof(float));
        acc[k] = _mm_add_ps(acc[k], sse_term<kKind>(_mm_loadu_ps(ta), _mm_loadu_ps(tb)));
    }
    return finish<kKind>(sse_fold16(_mm_add_ps(acc[0], acc[4]), _mm_add_ps(acc[1], acc[5]), _mm_add_ps(acc[2], acc[6]),
                                    _mm_add_ps(acc[3], acc[7])));
}

#    if defined(HNSW_AVX_DISPATCH)
template <int kKind>
__attribute__((target("avx"))) inline __m256 avx_term(__m256 a, __m256 b) {
    if constexpr (kKind == kL2) {
        __m256 d = _mm256_sub_ps(a, b);
        return _mm256_mul_ps(d, d);
    } else {
        return _mm256_mul_ps(a, b);
    }
}

// Lanes below r are all-ones: a maskload through it reads r floats and zeroes the rest.
alignas(32) constexpr int32_t kMaskTable[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };

__attribute__((target("avx"))) inline float avx_fold(__m256 lo, __m256 hi) {
    __m256 r = _mm256_add_ps(lo, hi);
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
    __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));
    return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));
}

template <int kKind>
__attribute__((target("avx"))) float avx_kernel(const float* a, const float* b, uint32_t n) {
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k)
            acc[k] = _mm256_add_ps(acc[k],
                                   avx_term<kKind>(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k)));
    for (int k = 0; i < n; ++k, i += 8) {
        const uint32_t r = n - i < 8 ? n - i : 8;
        const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - r));
        acc[k] = _mm256_add_ps(acc[k], avx_term<kKind>(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m)));
    }
    return finish<kKind>(avx_fold(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3])));
}

// GCC 12's avx512fintrin.h trips -Wuninitialized on its own _mm*_undefined_* helpers.
#        pragma GCC diagnostic push
#        pragma GCC diagnostic ignored "-Wuninitialized"
#        pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <int kKind>
__attribute__((target("avx512f"))) inline __m512 avx512_term(__m512 a, __m512 b) {
    if constexpr (kKind == kL2) {
        __m512 d = _mm512_sub_ps(a, b);
        return _mm512_mul_ps(d, d);
    } else {
        return _mm512_mul_ps(a, b);
    }
}

// Two registers hold the 32 lanes; the partial block is zero-masked loads.
template <int kKind>
__attribute__((target("avx512f"))) float avx512_kernel(const float* a, const float* b, uint32_t n) {
    __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        lo = _mm512_add_ps(lo, avx512_term<kKind>(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
        hi = _mm512_add_ps(hi, avx512_term<kKind>(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16)));
    }
    if (i < n) {
        const uint32_t rem = n - i;
        const __mmask16 m0 = rem >= 16 ? __mmask16(0xffff) : __mmask16((1u << rem) - 1);
        lo = _mm512_add_ps(lo, avx512_term<kKind>(_mm512_maskz_loadu_ps(m0, a + i), _mm512_maskz_loadu_ps(m0, b + i)));
        if (rem > 16) {
            const __mmask16 m1 = __mmask16((1u << (rem - 16)) - 1);
            hi = _mm512_add_ps(hi, avx512_term<kKind>(_mm512_maskz_loadu_ps(m1, a + i + 16),
                                                      _mm512_maskz_loadu_ps(m1, b + i + 16)));
        }
    }
    const __m512 s = _mm512_add_ps(lo, hi);               // 16 lanes
    const __m512 high = _mm512_shuffle_f32x4(s, s, 0xee); // lanes 8..15 moved down
    return finish<kKind>(avx_fold(_mm512_castps512_ps256(s), _mm512_castps512_ps256(high)));
}
#        pragma GCC diagnostic pop
#    endif
#endif

#if defined(__ARM_NEON)
template <int kKind>
inline float32x4_t neon_term(float32x4_t a, float32x4_t b) {
    if constexpr (kKind == kL2) {
        float32x4_t d = vsubq_f32(a, b);
        return vmulq_f32(d, d);
    } else {
        return vmulq_f32(a, b);
    }
}

// Eight independent accumulators: the adds of one block do not wait on each other.
template <int kKind>
float neon_kernel(const float* a, const float* b, uint32_t n) {
    float32x4_t acc[8];
    for (auto& x : acc)
        x = vdupq_n_f32(0);
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 8; ++k)
            acc[k] = vaddq_f32(acc[k], neon_term<kKind>(vld1q_f32(a + i + 4 * k), vld1q_f32(b + i + 4 * k)));
    // Partial block: whole quads into their lanes, then the last 1-3 elements zero-padded.
    int k = 0;
    for (; i + 4 <= n; i += 4, ++k)
        acc[k] = vaddq_f32(acc[k], neon_term<kKind>(vld1q_f32(a + i), vld1q_f32(b + i)));
    if (i < n) {
        float ta[4] = {}, tb[4] = {};
        std::memcpy(ta, a + i, (n - i) * sizeof(float));
        std::memcpy(tb, b + i, (n - i) * sizeof(float));
        acc[k] = vaddq_f32(acc[k], neon_term<kKind>(vld1q_f32(ta), vld1q_f32(tb)));
    }
    float32x4_t s[4];
    for (int j = 0; j < 4; ++j)
        s[j] = vaddq_f32(acc[j], acc[j + 4]);
    float32x4_t t = vaddq_f32(vaddq_f32(s[0], s[2]), vaddq_f32(s[1], s[3]));
    float32x2_t u = vadd_f32(vget_low_f32(t), vget_high_f32(t));
    return finish<kKind>(vget_lane_f32(u, 0) + vget_lane_f32(u, 1));
}
#endif

} // namespace

float l2_scalar(const float* a, const float* b, uint32_t n) { return scalar_kernel<kL2>(a, b, n); }
float dot_scalar(const float* a, const float* b, uint32_t n) { return scalar_kernel<kDot>(a, b, n); }
float ip_scalar(const float* a, const float* b, uint32_t n) { return scalar_kernel<kIp>(a, b, n); }

bool isa_available(Isa isa) {
    switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Sse:
#if defined(HNSW_X86)
        return true;
#else
        return false;
#endif
    case Isa::Avx:
#if defined(HNSW_AVX_DISPATCH)
        return __builtin_cpu_supports("avx");
#else
        return false;
#endif
    case Isa::Avx512:
#if defined(HNSW_AVX_DISPATCH)
        return __builtin_cpu_supports("avx512f");
#else
        return false;
#endif
    case Isa::Neon:
#if defined(__ARM_NEON)
        return true;
#else
        return false;
#endif
    }
    return false;
}

Kernels kernels_for(Isa isa) {
    if (!isa_available(isa))
        isa = Isa::Scalar;
    switch (isa) {
#if defined(HNSW_X86)
    case Isa::Sse: return { sse_kernel<kL2>, sse_kernel<kIp>, sse_kernel<kDot>, Isa::Sse };
#endif
#if defined(HNSW_AVX_DISPATCH)
    case Isa::Avx: return { avx_kernel<kL2>, avx_kernel<kIp>, avx_kernel<kDot>, Isa::Avx };
    case Isa::Avx512: return { avx512_kernel<kL2>, avx512_kernel<kIp>, avx512_kernel<kDot>, Isa::Avx512 };
#endif
#if defined(__ARM_NEON)
    case Isa::Neon: return { neon_kernel<kL2>, neon_kernel<kIp>, neon_kernel<kDot>, Isa::Neon };
#endif
    default: return { l2_scalar, ip_scalar, dot_scalar, Isa::Scalar };
    }
}

Kernels best_kernels() {
    constexpr Isa kPreference[] = { Isa::Avx512, Isa::Avx, Isa::Sse, Isa::Neon };
    for (Isa isa : kPreference)
        if (isa_available(isa))
            return kernels_for(isa);
    return kernels_for(Isa::Scalar);
}

const char* isa_name(Isa isa) {
    switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Sse: return "sse";
    case Isa::Avx: return "avx";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
    }
    return "?";
}

} // namespace hnsw

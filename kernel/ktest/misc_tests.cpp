// FP/SIMD state across switches, and memory-region policies through the system calls.
#include "cases.h"

#include <cstring>

namespace ktest {
namespace {

typedef float f32x4 __attribute__((vector_size(16)));

struct FpJob {
    double seed;
    double result;
    f32x4 vec;
};
FpJob g_jobs[3];

// Keeps live values in FP/SIMD registers across yields and preemption: any register the
// kernel failed to restore shows up as a wrong result.
__attribute__((noinline)) void fp_compute(FpJob& job, bool yield_inside) {
    double acc = job.seed;
    f32x4 v = { float(job.seed), 1.0f, 2.0f, 3.0f };
    const f32x4 k = { 1.0001f, 0.9999f, 1.0002f, 0.9998f };
    for (int i = 0; i < 3000; ++i) {
        acc = acc * 1.0000001 + i * 0.5;
        v = v * k + 0.25f;
        if (yield_inside && i % 25 == 0)
            sys::yield();
    }
    job.result = acc;
    job.vec = v;
}

int64_t fp_worker(void* arg) {
    fp_compute(*static_cast<FpJob*>(arg), true);
    return 0;
}

} // namespace

bool fp_state(const Caps& caps) {
    FpJob expected[3];
    for (int i = 0; i < 3; ++i) {
        expected[i].seed = g_jobs[i].seed = 1.5 + i * 1000.25;
        fp_compute(expected[i], false);
    }
    int64_t tasks[3];
    for (int i = 0; i < 3; ++i) {
        tasks[i] = spawn(caps, "fp", fp_worker, &g_jobs[i], 10);
        KT_CHECK(tasks[i] >= 0, "spawn");
    }
    for (int i = 0; i < 3; ++i)
        KT_CHECK(join(static_cast<uint32_t>(tasks[i])) == 0, "join");
    for (int i = 0; i < 3; ++i) {
        KT_CHECK(memcmp(&g_jobs[i].result, &expected[i].result, sizeof(double)) == 0, "task %d double state corrupted",
                 i);
        KT_CHECK(memcmp(&g_jobs[i].vec, &expected[i].vec, sizeof(f32x4)) == 0, "task %d SIMD state corrupted", i);
    }
    console::printf("ktest:   3 tasks x 3000 FP/SIMD steps with 120 yields each: results bit-identical to a "
                    "solo run\n");
    return true;
}

bool regions(const Caps& caps) {
    int64_t imm = sys::region_create(caps.factory, 8192, 0, 0);
    KT_CHECK(imm >= 0, "create immutable %lld", (long long)imm);
    const char text[] = "sealed vectors";
    KT_CHECK(sys::region_write(imm, 100, text, sizeof text) == 0, "write");
    KT_CHECK(sys::region_seal(imm) == 0, "seal");
    KT_CHECK(sys::region_write(imm, 0, text, 4) == -int64_t(ktl::Error::AccessDenied), "write after seal");
    char back[sizeof text] = {};
    KT_CHECK(sys::region_read(imm, 100, back, sizeof back) == sizeof back, "read");
    KT_CHECK(memcmp(back, text, sizeof text) == 0, "content");

    int64_t log = sys::region_create(caps.factory, 64, 1, 0);
    KT_CHECK(log >= 0, "create append-only");
    KT_CHECK(sys::region_append(log, "abc", 3) == 0, "append 1");
    KT_CHECK(sys::region_append(log, "def", 3) == 3, "append 2");
    KT_CHECK(sys::region_write(log, 0, "X", 1) == -int64_t(ktl::Error::AccessDenied), "overwrite in append-only");

    int64_t slab = sys::region_create(caps.factory, 4096, 2, 64);
    KT_CHECK(slab >= 0, "create slab");
    int64_t a = sys::region_alloc(slab), b = sys::region_alloc(slab);
    KT_CHECK(a == 0 && b == 1, "alloc %lld %lld", (long long)a, (long long)b);
    KT_CHECK(sys::region_free(slab, a) == 0, "free");
    KT_CHECK(sys::region_write(slab, 0, "x", 1) == -int64_t(ktl::Error::AccessDenied),
             "write into a freed slab object");

    // A read-only derivative cannot write, and the kernel refuses to write into its own text.
    int64_t ro = sys::cap_mint(imm, 0x1, 0);
    KT_CHECK(ro >= 0, "mint");
    KT_CHECK(sys::region_append(ro, "x", 1) == -int64_t(ktl::Error::AccessDenied),
             "write through a read-only capability");
    KT_CHECK(sys::region_read(imm, 100, reinterpret_cast<void*>(&fp_state), 4) == -int64_t(ktl::Error::InvalidArgs),
             "kernel text accepted as a destination buffer");
    KT_CHECK(sys::region_create(caps.factory, 64u << 20, 0, 0) == -int64_t(ktl::Error::InvalidArgs),
             "oversized region");
    console::printf("ktest:   regions: immutable sealed, append-only kept, slab confined, rights enforced\n");
    return true;
}

} // namespace ktest

namespace ktest {
namespace {
uint32_t g_waiter_timer = 0;
int64_t timer_waiter(void*) { return sys::timer_wait(g_waiter_timer, 0); }
} // namespace

bool timers(const Caps& caps) {
    int64_t t = sys::timer_create(caps.factory);
    KT_CHECK(t >= 0, "timer_create %lld", (long long)t);
    uint64_t t0 = sys::clock_ns();
    KT_CHECK(sys::timer_set(t, 30 * kMs, 0) == 0, "arm one-shot");
    int64_t n = sys::timer_wait(t, 1000 * kMs);
    uint64_t waited = sys::clock_ns() - t0;
    KT_CHECK(n == 1, "one-shot expirations %lld", (long long)n);
    KT_CHECK(waited >= 30 * kMs && waited < 300 * kMs, "one-shot after %llu ms", (unsigned long long)(waited / kMs));
    KT_CHECK(sys::timer_wait(t, 50 * kMs) == -int64_t(ktl::Error::TimedOut), "one-shot fired twice");

    KT_CHECK(sys::timer_set(t, 20 * kMs, 20 * kMs) == 0, "arm periodic");
    sys::sleep_ns(110 * kMs);
    n = sys::timer_wait(t, 1000 * kMs);
    KT_CHECK(n >= 4 && n <= 6, "periodic expirations after 110 ms: %lld", (long long)n);
    KT_CHECK(sys::timer_set(t, 0, 0) == 0, "disarm");
    KT_CHECK(sys::timer_set(t, 10 * kMs, 1000) == -int64_t(ktl::Error::InvalidArgs), "1 us period accepted");

    // Destroying an object: the blocked waiter wakes with BadHandle, every capability dies.
    int64_t waiter = spawn(caps, "timer-waiter", timer_waiter, nullptr, 10);
    KT_CHECK(waiter >= 0, "spawn");
    int64_t shared = share(static_cast<uint32_t>(t), static_cast<uint32_t>(waiter), 0x1);
    KT_CHECK(shared >= 0, "share");
    g_waiter_timer = static_cast<uint32_t>(shared);
    sys::sleep_ns(30 * kMs); // the waiter blocks in timer_wait
    int64_t ro = sys::cap_mint(t, 0x1, 0);
    KT_CHECK(ro >= 0, "mint");
    KT_CHECK(sys::object_destroy(ro) == -int64_t(ktl::Error::AccessDenied), "destroy without Revoke");
    KT_CHECK(sys::object_destroy(t) == 0, "destroy");
    int64_t code = join(static_cast<uint32_t>(waiter), 1000 * kMs);
    KT_CHECK(code == -int64_t(ktl::Error::BadHandle), "blocked waiter woke with %lld", (long long)code);
    KT_CHECK(sys::timer_wait(t, 10 * kMs) == -int64_t(ktl::Error::BadHandle), "original cap still works");
    KT_CHECK(sys::timer_wait(ro, 10 * kMs) == -int64_t(ktl::Error::BadHandle), "derived cap still works");
    KT_CHECK(sys::object_destroy(caps.factory) < 0, "the factory must not be destroyable");
    console::printf("ktest:   timers: one-shot after %llu ms, periodic counted, destroy wakes waiters and kills "
                    "every capability\n",
                    (unsigned long long)(waited / kMs));
    return true;
}

} // namespace ktest

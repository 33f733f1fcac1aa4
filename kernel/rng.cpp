#include "rng.h"

#include "arch/aarch64/cpu.h"
#include "clock.h"
#include "log.h"
#include "platform.h"

#include <crypto/chacha20.h>
#include <drivers/rng200/rng200.h>
#include <drivers/virtio/virtio_rng.h>

namespace rng {
namespace {

// Reseed after this much output: a later compromise of the state reveals at most this much.
constexpr uint64_t kReseedBytes = 64 * 1024;
constexpr size_t kSeedBytes = 48;

crypto::ChaChaRng g_drbg;
bool g_secure = false;
uint64_t g_reseeds = 0;
char g_sources[32] = "none";

// Hardware entropy into out (up to len bytes); returns how many bytes came from hardware. The
// counter's low bits are mixed in as well but never counted: they are not entropy worth the name.
size_t gather(uint8_t* out, size_t len) {
    size_t got = 0;
    if (auto* dev = platform::entropy_device())
        for (int tries = 0; tries < 4 && got < len; ++tries)
            got += dev->read(out + got, len - got);
    if (auto* hw = platform::hardware_rng())
        for (int tries = 0; tries < 4 && got < len; ++tries)
            got += hw->read(out + got, len - got);
    if (arch::has_rndr()) {
        for (int tries = 0; tries < 16 && got + 8 <= len; ++tries) {
            uint64_t v;
            if (!arch::rndr(v))
                continue;
            for (int i = 0; i < 8; ++i)
                out[got + i] = static_cast<uint8_t>(v >> (8 * i));
            got += 8;
        }
    }
    return got;
}

// Seeds (first) or reseeds the generator from the hardware sources and the counter; returns the
// bytes that came from hardware.
size_t mix_in(bool first) {
    uint8_t seed[kSeedBytes + 8] = {};
    size_t got = gather(seed, kSeedBytes);
    uint64_t t = clock::monotonic_ns();
    for (int i = 0; i < 8; ++i)
        seed[kSeedBytes + i] = static_cast<uint8_t>(t >> (8 * i));
    if (first)
        g_drbg.seed(seed, sizeof seed);
    else
        g_drbg.reseed(seed, sizeof seed);
    for (auto& b : seed)
        *static_cast<volatile uint8_t*>(&b) = 0;
    if (got > 0 && !first)
        ++g_reseeds;
    return got;
}

} // namespace

void init() {
    size_t n = 0;
    auto add = [&n](const char* name) {
        if (n)
            g_sources[n++] = '+';
        for (size_t i = 0; name[i] && n + 1 < sizeof g_sources; ++i)
            g_sources[n++] = name[i];
        g_sources[n] = '\0';
    };
    if (platform::entropy_device())
        add("virtio-rng");
    if (platform::hardware_rng())
        add("rng200");
    if (arch::has_rndr())
        add("rndr");
    size_t got = mix_in(true);
    g_secure = got >= 32;
    if (g_secure) {
        KLOG_INFO("random: ChaCha20 generator seeded with %zu bytes from %s", got, g_sources);
    } else {
        KLOG_ERROR("random: NO HARDWARE ENTROPY (%s gave %zu bytes): session ids and other secrets are PREDICTABLE. "
                   "On QEMU add `-device virtio-rng-device` (qemu/run.sh does); use a CPU with FEAT_RNG "
                   "(the Pi 4's RNG200 is used when its device tree node is enabled)",
                   g_sources, got);
    }
}

void fill(void* out, size_t len) {
    arch::IrqGuard guard;
    if (g_drbg.bytes_since_reseed() >= kReseedBytes)
        mix_in(false);
    g_drbg.fill(static_cast<uint8_t*>(out), len);
}

bool secure() { return g_secure; }
const char* sources() { return g_sources; }
uint64_t reseeds() { return g_reseeds; }

} // namespace rng

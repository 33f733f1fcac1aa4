#pragma once
// The kernel's random numbers: a ChaCha20 generator (lib/crypto/chacha20.h) seeded at boot from
// every hardware source the machine has (the virtio entropy device on QEMU, the CPU's RNDR where
// FEAT_RNG exists; the BCM2711 RNG200 joins with the Raspberry Pi board) and reseeded from them
// as it is used. A boot without any source says so loudly: its numbers are then predictable.
#include <cstddef>
#include <cstdint>

namespace rng {

void init();
// Fills out with len random bytes. Safe from any task (masks IRQs itself).
void fill(void* out, size_t len);
// Whether the generator was seeded from hardware entropy.
bool secure();
// The sources found, e.g. "virtio-rng+rndr", or "none".
const char* sources();
uint64_t reseeds();

} // namespace rng

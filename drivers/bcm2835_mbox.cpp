#include "bcm2835_mbox.h"

#include "mmio.h"

#include <kernel/arch/aarch64/cpu.h>

#include <new>

alignas(64) uint32_t Bcm2835Mailbox::m_buffer[Bcm2835Mailbox::kBufferWords];

namespace {
// Mailbox 0 (VideoCore to ARM) is read, mailbox 1 (ARM to VideoCore) written.
constexpr uintptr_t MBOX0_READ = 0x00;
constexpr uintptr_t MBOX0_STATUS = 0x18;
constexpr uintptr_t MBOX1_WRITE = 0x20;
constexpr uintptr_t MBOX1_STATUS = 0x38;
constexpr uint32_t kFull = 1u << 31;
constexpr uint32_t kEmpty = 1u << 30;
constexpr uint32_t kPropertyChannel = 8;
constexpr uint32_t kRequest = 0;
constexpr uint32_t kResponseOk = 0x80000000;
constexpr uint32_t kSpinLimit = 10'000'000; // a firmware that never answers is given up on

void clean_invalidate(const void* p, size_t bytes) {
    auto a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63);
    const auto end = reinterpret_cast<uintptr_t>(p) + bytes;
    for (; a < end; a += 64)
        asm volatile("dc civac, %0" ::"r"(a) : "memory");
    arch::dsb_sy();
}
} // namespace

ktl::Result<Bcm2835Mailbox*> Bcm2835Mailbox::create(uintptr_t base) {
    if (!base)
        return ktl::Error::InvalidArgs;
    alignas(Bcm2835Mailbox) static uint8_t storage[sizeof(Bcm2835Mailbox)];
    return new (storage) Bcm2835Mailbox(base);
}

ktl::Result<uint32_t> Bcm2835Mailbox::call(uint64_t bus, uint32_t tag, uint32_t* values, uint32_t words) {
    if (words == 0 || words + 6 > kBufferWords || (bus & 0xf) != 0 || bus > 0xffffffffull)
        return ktl::Error::InvalidArgs;
    uint32_t* b = m_buffer;
    const uint32_t total = (words + 6) * 4;
    b[0] = total;
    b[1] = kRequest;
    b[2] = tag;
    b[3] = words * 4; // value buffer size
    b[4] = 0;         // request
    for (uint32_t i = 0; i < words; ++i)
        b[5 + i] = values[i];
    b[5 + words] = 0;           // end tag
    clean_invalidate(b, total); // the VideoCore reads RAM, not our cache

    uint32_t spins = 0;
    while ((mmio::read32(m_base + MBOX1_STATUS) & kFull) && ++spins < kSpinLimit) {}
    if (spins >= kSpinLimit)
        return ktl::Error::TimedOut;
    mmio::write32(m_base + MBOX1_WRITE, static_cast<uint32_t>(bus) | kPropertyChannel);
    for (uint32_t answers = 0;; ++answers) {
        if (answers == 64)
            return ktl::Error::TimedOut; // answers, but never to this request
        spins = 0;
        while ((mmio::read32(m_base + MBOX0_STATUS) & kEmpty) && ++spins < kSpinLimit) {}
        if (spins >= kSpinLimit)
            return ktl::Error::TimedOut;
        uint32_t answer = mmio::read32(m_base + MBOX0_READ);
        if ((answer & 0xf) == kPropertyChannel && (answer & ~0xfu) == static_cast<uint32_t>(bus))
            break; // (anything else on another channel is not ours: keep waiting)
    }
    clean_invalidate(b, total);
    if (b[1] != kResponseOk || b[2] != tag || (b[4] & kResponseOk) == 0)
        return ktl::Error::Unsupported;
    const uint32_t length = b[4] & ~kResponseOk;
    const uint32_t copy = (length + 3) / 4 < words ? (length + 3) / 4 : words;
    for (uint32_t i = 0; i < copy; ++i)
        values[i] = b[5 + i];
    return length;
}

#include "pl031.h"

#include "mmio.h"

#include <new>

namespace {
constexpr uintptr_t RTCDR = 0x000; // data register (DDI 0224 3.3.1)
constexpr uintptr_t RTCCR = 0x00c; // control: bit 0 starts the counter
alignas(Pl031) unsigned char g_storage[sizeof(Pl031)];
bool g_created = false;
} // namespace

ktl::Result<Pl031*> Pl031::create(uintptr_t base) {
    if (base == 0)
        return ktl::Error::InvalidArgs;
    if (g_created)
        return ktl::Error::Exists;
    g_created = true;
    auto* rtc = new (g_storage) Pl031();
    rtc->m_base = base;
    if ((mmio::read32(base + RTCCR) & 1) == 0)
        mmio::write32(base + RTCCR, 1);
    return rtc;
}

uint32_t Pl031::read_seconds() const { return mmio::read32(m_base + RTCDR); }

#pragma once
// ARM PrimeCell RTC PL031 (ARM DDI 0224): a free-running seconds counter holding UTC.
#include <cstdint>

#include <ktl/result.h>

class Pl031 {
public:
    static ktl::Result<Pl031*> create(uintptr_t base);
    uint32_t read_seconds() const; // seconds since 1970-01-01 UTC

private:
    Pl031() = default;
    uintptr_t m_base = 0;
};

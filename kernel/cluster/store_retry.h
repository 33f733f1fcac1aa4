#pragma once
// The cluster task's store calls that must not be skipped (a committed change applied, a voter's
// collections replaced while it catches up): one refused for a passing reason (the store still
// recovered, a checkpoint, staging full, requests still running on a collection) is made again
// every millisecond, two minutes at most, the task waiting (its rounds, SWIM's included, with it).
#include <cstdint>

#include <abi/sys.h>
#include <ktl/result.h>

namespace clusterd {

constexpr bool passing_refusal(int64_t r) {
    return r == -static_cast<int64_t>(ktl::Error::WouldBlock) || r == -static_cast<int64_t>(ktl::Error::NotReady);
}

template <typename Call>
int64_t patiently(Call&& call) {
    constexpr uint32_t kMaxTries = 120'000; // two minutes
    int64_t r = 0;
    for (uint32_t i = 0; i < kMaxTries; ++i) {
        r = call();
        if (!passing_refusal(r))
            break;
        sys::sleep(1'000'000);
    }
    return r;
}

} // namespace clusterd

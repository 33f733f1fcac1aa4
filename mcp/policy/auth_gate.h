#pragma once
// Slows repeated authentication failures, before any authentication work. Each source (an HTTP
// peer address, a serial line) has a bucket of failures (burst, refilled per second); a request
// presenting a key that fails costs one. Once a source's bucket is empty, its requests are
// refused at once (limit_rate_exceeded, reason auth_throttled) unless they present a key that
// recently authenticated from that source: a client with a good key is served throughout while
// another client at the same address (QEMU's user network shows every host connection as one
// peer) tries keys. Requests without a key are not the gate's business: they act as the guest.
// Fixed tables: kSources sources (the least recently seen gives way), kGoodKeys keys each.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <crypto/sha256.h>

namespace mcp {

class AuthGate {
public:
    static constexpr size_t kSources = 64;
    static constexpr size_t kGoodKeys = 4;
    struct Config {
        uint32_t burst = 20;     // failures a source may make at once
        uint32_t per_second = 2; // and then per second
    };

    AuthGate() = default;
    explicit AuthGate(Config config) : m_config(config) {}

    // A short fingerprint of a presented key (the first 8 bytes of its SHA-256).
    static uint64_t fingerprint(std::string_view key);
    static uint64_t fingerprint(const crypto::Digest& digest); // of a key whose SHA-256 this is
    // Whether a request from `source` presenting the key with this fingerprint may be
    // authenticated now.
    bool admit(uint64_t source, uint64_t key_fp, uint64_t now_ns);
    void failed(uint64_t source, uint64_t now_ns);
    void succeeded(uint64_t source, uint64_t key_fp, uint64_t now_ns);

    uint64_t refused() const { return m_refused; }
    uint64_t failures() const { return m_failures; }

private:
    struct Source {
        uint64_t id = 0;
        bool used = false;
        uint64_t milli_tokens = 0; // thousandths of a failure
        uint64_t refilled_ns = 0;
        uint64_t seen_ns = 0;
        uint64_t good[kGoodKeys] = {};
        uint32_t next_good = 0;
    };
    Source& source(uint64_t id, uint64_t now_ns);
    void refill(Source& s, uint64_t now_ns) const;

    Config m_config;
    Source m_sources[kSources];
    uint64_t m_refused = 0;
    uint64_t m_failures = 0;
};

} // namespace mcp

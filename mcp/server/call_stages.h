#pragma once
// Where the time of a tools/call goes: per-stage totals a Server keeps for every tools/call it
// admits to the pipeline, read from outside (the kernel's kernel://perf). The durations come from
// the Host's clock (now_ns: the generic timer's counter in the kernel, whatever a test provides
// on the host), one reading per stage boundary; add() is a few integer operations into fixed
// counters: no allocation, no formatting. Written by the one thread that runs the Server; a
// reader elsewhere may see a count and its sum from two different calls, never a torn value.
#include <cstddef>
#include <cstdint>

namespace mcp {

class CallStages {
public:
    // In the order a call meets them. Call: the whole call, from the message's arrival at the
    // Server to the answer handed to the transport; the stages lie within it, one after another,
    // so their sums never exceed its sum (what they leave out: dispatch between them, the tool
    // task's wait to be scheduled, the bridge's wait to notice it finished).
    enum Stage : uint8_t {
        Parse,        // the envelope's timestamp taken, the JSON-RPC message parsed and checked
        Authenticate, // the line's principal or a presented key (and a 2026-07-28 envelope)
        Provenance,   // the request's provenance node
        Route,        // name and arguments read, the arguments' hash, the allowlist, the target
        Authorise,    // the caller's scopes
        Validate,     // the arguments against the tool's input schema (and input-round checks)
        Admit,        // the caller's rate and concurrency
        Start,        // the call handed to the host: its task created and token issued (kernel)
        Body,         // the tool itself (kernel: the tool task, from its start to its end)
        Encode,       // the reply written
        Audit,        // the decision recorded in the audit trail
        Send,         // the answer handed to the transport (serial: written to the line)
        Call,         // the whole call
        kCount
    };
    static constexpr size_t kBuckets = 32; // bucket b: durations in [2^b, 2^(b+1)) ns (0: under 2 ns)

    struct Totals {
        uint64_t count = 0;
        uint64_t sum_ns = 0;
        uint64_t max_ns = 0;
        uint32_t buckets[kBuckets] = {};
    };

    static const char* name(Stage s) {
        static const char* const kNames[kCount] = { "parse",    "authenticate", "provenance", "route", "authorise",
                                                    "validate", "admit",        "start",      "body",  "encode",
                                                    "audit",    "send",         "call" };
        return s < kCount ? kNames[s] : "?";
    }

    void add(Stage s, uint64_t ns) {
        if (s >= kCount)
            return;
        Totals& t = m_totals[s];
        t.count += 1;
        t.sum_ns += ns;
        if (ns > t.max_ns)
            t.max_ns = ns;
        size_t b = ns < 2 ? 0 : size_t(63 - __builtin_clzll(ns));
        t.buckets[b < kBuckets ? b : kBuckets - 1] += 1;
    }
    // From `since` to now on a monotonic clock (0 when the clock went backwards or is absent).
    void add_since(Stage s, uint64_t since, uint64_t now) { add(s, now > since ? now - since : 0); }

    const Totals& totals(Stage s) const { return m_totals[s < kCount ? s : 0]; }

    // The upper bound of the bucket holding the q-th quantile (q in percent) of `t`: an estimate
    // within a factor of two, capped at the largest duration seen.
    static uint64_t quantile_ns(const Totals& t, uint32_t percent) {
        if (t.count == 0)
            return 0;
        uint64_t want = (t.count * percent + 99) / 100, seen = 0;
        for (size_t b = 0; b < kBuckets; ++b) {
            seen += t.buckets[b];
            if (seen >= want && seen > 0) {
                uint64_t upper = b + 1 < 64 ? (uint64_t(1) << (b + 1)) - 1 : ~uint64_t(0);
                return upper < t.max_ns ? upper : t.max_ns;
            }
        }
        return t.max_ns;
    }

    // `other`'s totals added to these (a reader combining transports).
    void merge(const CallStages& other) {
        for (size_t s = 0; s < kCount; ++s) {
            Totals& t = m_totals[s];
            const Totals& o = other.m_totals[s];
            t.count += o.count;
            t.sum_ns += o.sum_ns;
            t.max_ns = o.max_ns > t.max_ns ? o.max_ns : t.max_ns;
            for (size_t b = 0; b < kBuckets; ++b)
                t.buckets[b] += o.buckets[b];
        }
    }

private:
    Totals m_totals[kCount];
};

} // namespace mcp

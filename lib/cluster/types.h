#pragma once
// The vocabulary of cluster membership: limits, addresses, member records, the protocol's
// tunables and what a node reports. Portable and allocation-free: the kernel owns one Node and
// the host tests run dozens of them in one process.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace cluster {

constexpr size_t kMaxMembers = 64;    // including self
constexpr size_t kMaxNameLen = 31;    // node names: [A-Za-z0-9._-]{1,31}
constexpr size_t kMaxDatagram = 1200; // every message fits (no IP fragmentation)
constexpr size_t kMaxSeeds = 16;
constexpr uint16_t kDefaultPort = 7946;
constexpr size_t kMaxIndirect = 8; // ping-req fan-out is clamped to this
constexpr size_t kMaxPendingPings = 8;
constexpr size_t kEventCapacity = 64;
// How far one update may raise the incarnation we hold for a member (or a rumour about us may
// raise ours). A member raises its own by one per refutation, so honest news never jumps this
// far; an update that does is forged by a key holder, and believing it would let one datagram
// ("dead at 2^32-1") leave its victim unable to ever outbid it. Within a bound, driving an
// incarnation to saturation takes billions / kMaxIncarnationStep datagrams, and a restart (a
// new boot id, replay.h) brings the member back alive whatever incarnation it was held at.
constexpr uint32_t kMaxIncarnationStep = 1024;
// How far ahead of our own wall clock a peer's boot id may be: further is forged (a key holder
// posing as a later boot would lock the genuine one out), not skew between honest clocks.
constexpr uint64_t kMaxBootSkewMs = 3600ull * 1000;

struct Address {
    uint32_t ip = 0; // host byte order: 10.10.0.2 == 0x0a0a0002
    uint16_t port = 0;
};
bool operator==(Address a, Address b);

using Key = std::array<uint8_t, 32>;

enum class State : uint8_t { Alive, Suspect, Dead };
constexpr uint8_t kStateCount = 3;
const char* state_name(State s);

struct Config {
    uint32_t period_ms = 1000;     // one probe per protocol period
    uint32_t ack_timeout_ms = 400; // direct probe; then indirect probes until the period ends
    uint32_t indirect = 3;         // k members asked to probe on our behalf (ping-req)
    uint32_t suspicion_mult = 5;   // suspicion timeout = suspicion_mult * max(1, ceil(log10(n+1))) * period
    uint32_t announce_ms = 2000;   // alive announcements to seeds + broadcast
    uint32_t retransmit_mult = 4;  // an update is piggy-backed retransmit_mult * ceil(log2(n+1)) times
};
// n = live (not dead) members, self included.
uint64_t suspicion_timeout_ns(const Config& c, size_t live_members);
// How many times one update is piggy-backed in a cluster of n live members.
uint32_t retransmit_limit(const Config& c, size_t live_members);
// The tunables a Node actually runs with: zero periods, an ack timeout beyond the period and
// fan-outs beyond the fixed tables would otherwise break its timers or its arrays.
Config sanitize(const Config& c);

struct Member {
    char name[kMaxNameLen + 1] = {};
    Address addr;
    State state = State::Alive;
    uint32_t incarnation = 0;
    uint64_t last_heard_ns = 0; // last authenticated message from it (0: never directly)
    uint64_t rtt_ns = 0;        // last measured round trip (0: none)
    uint64_t state_since_ns = 0;
};

// Called from inside tick(), receive() and ping(); it must not call back into the node (queue
// the datagram instead), since the node is in the middle of handling something.
class Transport {
public:
    virtual void send(Address to, std::span<const uint8_t> datagram) = 0;

protected:
    ~Transport() = default;
};

enum class Verdict : uint8_t { Accepted, Malformed, BadMac, Replayed, FromSelf, TableFull, WrongVersion };
const char* verdict_name(Verdict v);

struct Event {
    enum class Kind : uint8_t { Joined, Alive, Suspect, Dead, Refuted, Refused } kind = Kind::Joined;
    char name[kMaxNameLen + 1] = {}; // empty for Refused: the datagram's claims are not believed
    Address addr;                    // for Refused: the datagram's source
    uint32_t incarnation = 0;
    Verdict verdict = Verdict::Accepted; // for Refused: why
    uint64_t unreported = 0;             // for Refused: refusals of the same kind not reported before it
};
const char* event_kind_name(Event::Kind k);

struct Stats {
    uint64_t sent = 0, received = 0, accepted = 0, bad_mac = 0, malformed = 0, replayed = 0;
    uint64_t probes = 0, indirect_probes = 0, suspicions = 0, deaths = 0, refutations = 0, events_lost = 0;
    uint64_t from_self = 0, table_full = 0, wrong_version = 0;
    uint64_t refusals_unreported = 0; // refused datagrams that made no Refused event (RefusalLimiter)
    uint64_t restarts = 0;            // a member heard from a later boot: its earlier life's record ends
    uint64_t incarnation_jumps = 0;   // updates refused for raising an incarnation beyond kMaxIncarnationStep
};

bool valid_name(std::string_view name);

} // namespace cluster

#pragma once
// The datagram format. Big-endian throughout:
//   magic u32 "BCSW" | version u8 (1) | type u8 | sender name (len u8 + bytes) | sender incarnation u32
//   | boot id u64 | message counter u64 | seq u32
//   | body: Ping: target name; Ack: subject name; PingReq: target name, ip u32, port u16; Announce: -
//   | update count u8 (<= kMaxUpdates) | updates: name, ip u32, port u16, state u8, incarnation u32
//   | tag: HMAC-SHA256(cluster key, every byte before it)
// A name is a length byte (1..31) and that many bytes of [A-Za-z0-9._-].
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <cluster/types.h>

namespace cluster {

constexpr uint32_t kMagic = 0x42435357; // "BCSW"
constexpr uint8_t kVersion = 1;
constexpr size_t kTagLen = 32;
constexpr size_t kMaxNameField = 1 + kMaxNameLen;
constexpr size_t kHeaderMax = 4 + 1 + 1 + kMaxNameField + 4 + 8 + 8 + 4;
constexpr size_t kBodyMax = kMaxNameField + 4 + 2;
constexpr size_t kUpdateMax = kMaxNameField + 4 + 2 + 1 + 4;
// As many updates as fit when every name has the longest length, so no message can overflow.
constexpr size_t kMaxUpdates = (kMaxDatagram - kHeaderMax - kBodyMax - 1 - kTagLen) / kUpdateMax;
static_assert(kMaxUpdates >= 8 && kMaxUpdates <= 255);

enum class MessageType : uint8_t { Ping = 1, Ack = 2, PingReq = 3, Announce = 4 };

// A validated node name kept inline (no pointers into a datagram that may be reused).
struct Name {
    uint8_t len = 0;
    char text[kMaxNameLen + 1] = {};
    std::string_view view() const { return { text, len }; }
    bool set(std::string_view name); // false (and empty) unless valid_name(name)
    bool operator==(std::string_view other) const { return view() == other; }
};

struct Update {
    Name name;
    Address addr;
    State state = State::Alive;
    uint32_t incarnation = 0;
};

struct Message {
    MessageType type = MessageType::Ping;
    Name sender;
    uint32_t incarnation = 0;
    uint64_t boot_id = 0;
    uint64_t counter = 0;
    uint32_t seq = 0;
    Name target;         // Ping: who should answer; Ack: whose liveness it confirms; PingReq: whom to probe
    Address target_addr; // PingReq only
    uint8_t update_count = 0;
    Update updates[kMaxUpdates];
};

// Serialises and tags `m` into `out`; returns the length, or 0 if a field is invalid (names,
// states, counts, a PingReq address of zero) or out is too small.
size_t encode(const Message& m, const Key& key, std::span<uint8_t> out);

// Malformed: too short or long, wrong magic, or (after the tag checked out) any field out of
// range or a length that does not end exactly at the tag; BadMac: the tag does not match;
// WrongVersion: an authentic message of another protocol version. `out` is only meaningful on
// Accepted.
Verdict decode(std::span<const uint8_t> in, const Key& key, Message& out);

} // namespace cluster

#pragma once
// The requestState of a 2026-07-28 InputRequiredResult (SEP-2322): what a call in several rounds
// carries from one round to the next through the client, which must hand it back untouched.
// It is attacker-controlled input, so it is sealed with HMAC-SHA256 under a key only this
// kernel holds (drawn at boot) and bound to what asked for it: the method, the tool or prompt,
// a hash of its arguments, the principal, and an expiry. What it carries: the answers the body
// has used so far (a later round's inputResponses hold only the new ones).
//   state   = base64(payload) "." base64(MAC)
//   payload = method \n name \n args-hash (16 hex) \n principal \n expiry (s since boot) \n answers
// where answers are the members (no braces) of a JSON object. Portable.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace mcp {

struct StateBinding {
    std::string_view method; // tools/call or prompts/get
    std::string_view name;
    uint64_t args_hash = 0;
    uint16_t principal = 0;
};

constexpr uint64_t kStateLifetimeNs = 10ull * 60 * 1000000000; // a user may take a while to answer
constexpr size_t kMaxStatePayload = 7168;
constexpr size_t kMaxState = (kMaxStatePayload + 2) / 3 * 4 + 1 + 44;

// The sealed state into out (at least kMaxState bytes for the largest); 0 when it does not fit
// (answers over the payload limit) or there is no key.
size_t seal_state(std::span<const uint8_t> key, const StateBinding& b, uint64_t now_ns, std::string_view answers,
                  std::span<char> out);

enum class StateCheck : uint8_t { Ok, Malformed, Forged, Foreign, Expired };
const char* state_check_name(StateCheck c); // "malformed", "forged", ...

// Opens a state: the MAC first (nothing of a forged state is read), then the binding and the
// expiry. Ok: `answers` views the carried answers' members inside payload_buf.
StateCheck open_state(std::span<const uint8_t> key, const StateBinding& b, uint64_t now_ns, std::string_view state,
                      std::span<char> payload_buf, std::string_view& answers);

} // namespace mcp

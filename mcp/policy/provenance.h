#pragma once
// Provenance (the adapter contract): every admitted request gets a node before any policy runs,
// saying where it came from — who, over which line and session, as which client — and how far it
// may be trusted. Whatever a client sent is UNTRUSTED; work derived from a request (later: writes
// forwarded between swarm nodes) names it as its parent, so a decision or a stored vector can be
// traced back to its cause. The host keeps the nodes (the kernel: a bounded ring region) and
// numbers them; this file is the portable description and the text form of their ids.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "key_store.h"

namespace mcp {

enum class Integrity : uint8_t { Untrusted = 0, Trusted = 1 };
const char* integrity_name(Integrity integrity);

// A node as the dispatcher describes it; the host copies what it keeps (cut to its fields).
struct ProvenanceNode {
    uint64_t parent = 0;                  // 0: none (a request straight from a client)
    const Principal* principal = nullptr; // nullptr: anonymous
    const char* transport = "";
    uint32_t session = 0;         // Session::origin
    std::string_view client_name; // as the client declared it (clientInfo), unverified
    std::string_view client_version;
    std::string_view request_id;
    std::string_view method;
    Integrity integrity = Integrity::Untrusted;
};

// A node id is 64 bits: the boot's tag (32 random bits, nonzero) above the node's number in that
// boot (1-based), so an id kept from an earlier boot never names a node of this one. Text form:
// the tag as 8 hex digits, '-', the number in decimal ("9c1e02aa-17"); 0 is "" (no node).
constexpr size_t kProvenanceIdText = 20; // 8 + 1 + 10 digits + NUL
constexpr uint64_t make_provenance_id(uint32_t boot_tag, uint32_t number) {
    return (uint64_t(boot_tag) << 32) | number;
}
constexpr uint32_t provenance_boot(uint64_t id) { return static_cast<uint32_t>(id >> 32); }
constexpr uint32_t provenance_number(uint64_t id) { return static_cast<uint32_t>(id); }
// Writes the text form (NUL-terminated) into out; returns its length.
size_t format_provenance_id(uint64_t id, char (&out)[kProvenanceIdText]);
// The id a text form names; nullopt unless it is exactly one (lowercase hex, no leading zeros in
// the number, neither part zero).
std::optional<uint64_t> parse_provenance_id(std::string_view text);

} // namespace mcp

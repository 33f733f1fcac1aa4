#pragma once
// Every bound of the JSON reader in one place (style: "All limits in one header").
#include <cstddef>
#include <cstdint>

namespace json {

struct Limits {
    size_t max_input = 1u << 20; // bytes of one document (one JSON-RPC message)
    uint32_t max_depth = 32;     // nested arrays/objects
    uint32_t max_string = 65536; // bytes of one string or key, as written (escaped)
    uint32_t max_members = 1024; // per object
    uint32_t max_items = 65536;  // per array
    uint32_t max_number = 64;    // characters of one number literal (at most kMaxNumberLiteral)
};

// A ceiling no Limits can raise: as_double() converts a literal through a buffer of this size
// plus the terminator, so longer literals are refused (TooLong) whatever max_number says.
constexpr uint32_t kMaxNumberLiteral = 79;

} // namespace json

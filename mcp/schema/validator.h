#pragma once
// JSON Schema (the subset MCP tool input schemas need) for validating tools/call arguments
// before a tool runs. Portable and allocation-free. Keywords: type, required, properties,
// additionalProperties, minLength/maxLength (in code points), minimum/maximum,
// exclusiveMinimum/exclusiveMaximum, enum, items, minItems/maxItems, format ("name", "path":
// our own, for identifiers and relative paths: no "..", no empty or hidden segments) and the
// annotations title, description, default, examples, $schema. Any other keyword fails closed:
// a schema we cannot fully enforce must not pass input it was meant to stop.
#include <cstddef>
#include <cstdint>

#include <json/json.h>

namespace mcp::schema {

enum class Reason : uint8_t {
    None,
    Type,
    Required,
    AdditionalProperty,
    TooShort,
    TooLong,
    BelowMinimum,
    AboveMaximum,
    NotInEnum,
    TooFewItems,
    TooManyItems,
    BadName,
    Unbounded,
    SchemaUnsupported,
};
const char* reason_name(Reason reason); // stable snake_case, e.g. "too_long"

struct Failure {
    Reason reason = Reason::None;
    const char* keyword = ""; // the schema keyword that failed
    char path[96] = "";       // JSON pointer of the offending value ("/items/3/name")
};

constexpr int kMaxSchemaDepth = 16;

// True when `instance` satisfies `schema`; otherwise false with the first failure.
bool validate(const json::Value& schema, const json::Value& instance, Failure& out);

// For our own schemas (tests, start-up checks): every keyword supported, every string with
// maxLength, every number with minimum and maximum, every array with items and maxItems, every
// object with additionalProperties. Failure::path then points into the schema.
bool check_bounded(const json::Value& schema, Failure& out);

} // namespace mcp::schema

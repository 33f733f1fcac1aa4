#pragma once
// JSON Schema, the subset MCP tool input schemas need, for checking tools/call arguments before a
// tool runs. Portable and freestanding: no allocation, no exceptions, no floating point (numbers
// are compared exactly on their decimal literals), recursion bounded by the SCHEMA's nesting
// (kMaxSchemaDepth): the instance is only followed where the schema leads.
//
// Keywords:
//   type                 a name or an array of names: object, array, string, integer, number,
//                        boolean, null ("integer": a number with no fractional part, 1.0 and 1e3
//                        included, decided on the literal, so exact at any magnitude)
//   required, properties, additionalProperties (false, true or a schema)
//   minLength/maxLength  Unicode code points of the unescaped string ("\u00e9" counts as one)
//   minimum/maximum/exclusiveMinimum/exclusiveMaximum   numbers
//   enum                 strings, numbers, booleans, null; compared by value (unescaped strings,
//                        numeric equality: 1 == 1.0 == 10e-1)
//   items (one schema), minItems/maxItems
//   format               ours: "name" = one or more of [A-Za-z0-9._:-], not starting with '.', no
//                        ".."; "path" = names joined by '/': no leading or trailing '/', no empty
//                        segment, no segment starting with '.', no ".." anywhere
//   $defs, $ref          local definitions: "$ref" names "#/$defs/NAME" of the ROOT schema only, with
//                        nothing beside it but title/description/$defs/$schema; a reference is checked as its
//                        definition (each one costs a nesting level, so self-reference is bounded)
//   const                a scalar the value must equal (compared like enum members)
//   allOf, anyOf, oneOf  1..16 schemas the value must match all of / at least one of / exactly one of
//   not, if/then/else    a schema the value must not match; the then schema applies where the
//                        value matches if, the else schema where it does not
//                        (applicators only narrow the schema around them: check_bounded does not
//                        ask their subschemas for bounds of their own)
//   title, description, default, examples, $schema, $anchor, x-mcp-header (2026-07-28: the
//                        argument is mirrored in an HTTP header): annotations, ignored.
// Anything else (another keyword, a keyword with a value of another shape, a boolean schema)
// fails closed with SchemaUnsupported: a schema we cannot fully enforce must not pass input it was
// meant to stop. The whole schema is checked before the instance, so the outcome never depends on
// which branches an instance happens to reach.
#include <cstddef>
#include <cstdint>

#include <json/json.h>

namespace mcp::schema {

constexpr int kMaxSchemaDepth = 16;      // nested schemas validate() accepts (the root is level 1)
constexpr int kMaxBoundedDepth = 12;     // check_bounded() is stricter: our own schemas keep headroom
constexpr size_t kMaxPointer = 64;       // bytes of Failure::path, terminator included
constexpr size_t kMaxPropertyName = 128; // unescaped bytes of a name in properties/required

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
    BadName,           // format "name" or "path" violated
    Unbounded,         // check_bounded(): a bound the lint requires is missing
    SchemaUnsupported, // the schema itself uses something we do not enforce
    NoAlternative,     // anyOf/oneOf/not: the value matches none (or, oneOf, several) of the schemas
};
// Stable snake_case: "type", "required", "additional_property", "too_short", "too_long",
// "below_minimum", "above_maximum", "not_in_enum", "too_few_items", "too_many_items", "bad_name",
// "unbounded", "schema_unsupported", "no_alternative" (and "none").
const char* reason_name(Reason reason);

struct Failure {
    Reason reason = Reason::None;
    const char* keyword = ""; // the schema keyword that failed or is missing; "" if none applies
    const char* message = ""; // a short static explanation
    // JSON pointer (RFC 6901) of the offending instance value ("/items/3/name", "" for the root);
    // for SchemaUnsupported and Unbounded, of the offending place in the schema
    // ("/properties/q", "/properties/q/pattern" for an unknown keyword). A pointer that does not
    // fit is cut on a character boundary and ends in "...".
    char path[kMaxPointer] = "";
};

// True when `instance` satisfies `schema`; otherwise false with the first failure in `out`.
bool validate(const json::Value& schema, const json::Value& instance, Failure& out);
// validate() in its two passes, for a schema checked once and kept (compiled.h): check_schema()
// is the schema pass alone (false: what validate() would refuse the schema with), and
// validate_instance() the instance pass, only for a schema check_schema() accepted. Together they
// give validate()'s outcome and failure.
bool check_schema(const json::Value& schema, Failure& out);
bool validate_instance(const json::Value& schema, const json::Value& instance, Failure& out);

// The lint for our own tool schemas (host tests, kernel start-up): everything validate() would
// refuse as SchemaUnsupported, plus: at most kMaxBoundedDepth levels; every schema has a type or
// an enum (an enum bounds it); every "string" a maxLength; every "number"/"integer" a lower bound
// (minimum or exclusiveMinimum) and an upper bound; every "array" maxItems and items; every
// "object" additionalProperties false or a schema. False with reason Unbounded (or
// SchemaUnsupported), the keyword, a message and the schema pointer in `out`.
bool check_bounded(const json::Value& schema, Failure& out);

} // namespace mcp::schema

// JSON Schema subset for tool arguments (see validator.h). Two passes: the schema alone (every
// keyword known and well formed, depth bounded, and for check_bounded every bound present), then
// the instance against it. Recursive functions keep small frames; buffers live in leaf helpers.
#include "validator.h"

#include <optional>
#include <string_view>

#include "literals.h"
#include "pointer.h"

namespace mcp::schema {
namespace {

bool fail(Failure& f, Reason reason, const char* keyword, const char* message) {
    f.reason = reason;
    f.keyword = keyword;
    f.message = message;
    return false;
}

std::optional<Decimal> number(const json::Value& v) { return v.is_number() ? parse_decimal(v.raw()) : std::nullopt; }

bool bound_number(const json::Value& v) {
    auto d = number(v);
    return d && schema_number(*d);
}

bool same_value(const json::Value& a, const json::Value& b) {
    if (a.type() != b.type())
        return false;
    switch (a.type()) {
    case json::Type::Null: return true;
    case json::Type::Bool: return a.as_bool() == b.as_bool();
    case json::Type::String: return same_string(a.raw(), b.raw());
    case json::Type::Number: {
        auto x = number(a), y = number(b);
        return x && y && compare(*x, *y) == 0;
    }
    default: return false; // enum members are scalars (checked with the schema)
    }
}

// ---------------------------------------------------------------------------------------------
// Types.

enum TypeBit : uint32_t {
    kNull = 1u << 0,
    kBoolean = 1u << 1,
    kInteger = 1u << 2,
    kNumber = 1u << 3,
    kString = 1u << 4,
    kArray = 1u << 5,
    kObject = 1u << 6,
    kAnyType = (1u << 7) - 1,
};

uint32_t type_name_bit(const json::Value& name) {
    static constexpr struct {
        const char* name;
        uint32_t bit;
    } kNames[] = { { "object", kObject }, { "array", kArray },     { "string", kString }, { "integer", kInteger },
                   { "number", kNumber }, { "boolean", kBoolean }, { "null", kNull } };
    for (const auto& t : kNames)
        if (name.string_equals(t.name))
            return t.bit;
    return 0;
}

// The types a "type" keyword allows; 0 when it is not a known name or a non-empty array of them.
uint32_t type_keyword_bits(const json::Value& type) {
    if (type.is_string())
        return type_name_bit(type);
    if (!type.is_array() || type.size() == 0)
        return 0;
    uint32_t bits = 0;
    for (json::Value t = type.first(); t.valid(); t = t.next_sibling()) {
        uint32_t bit = type_name_bit(t);
        if (bit == 0)
            return 0;
        bits |= bit;
    }
    return bits;
}

uint32_t allowed_types(const json::Value& schema) {
    json::Value type = schema.find("type");
    return type.valid() ? type_keyword_bits(type) : kAnyType;
}

uint32_t instance_types(const json::Value& v) {
    switch (v.type()) {
    case json::Type::Null: return kNull;
    case json::Type::Bool: return kBoolean;
    case json::Type::String: return kString;
    case json::Type::Array: return kArray;
    case json::Type::Object: return kObject;
    case json::Type::Number: {
        auto d = number(v);
        return d && d->integral() ? (kNumber | kInteger) : kNumber;
    }
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The schema pass: keywords and their values' shapes; bounds for check_bounded.

enum class Shape : uint8_t {
    Any,
    Type,
    Enum,
    Names,
    Schemas,
    BoolOrSchema,
    Schema,
    Count,
    Number,
    Format,
    Ref,
    SchemaList,
    Scalar,
    Text
};

struct Keyword {
    const char* name;
    Shape shape;
};

constexpr Keyword kKeywords[] = {
    { "type", Shape::Type },
    { "enum", Shape::Enum },
    { "required", Shape::Names },
    { "properties", Shape::Schemas },
    { "additionalProperties", Shape::BoolOrSchema },
    { "items", Shape::Schema },
    { "minLength", Shape::Count },
    { "maxLength", Shape::Count },
    { "minItems", Shape::Count },
    { "maxItems", Shape::Count },
    { "minimum", Shape::Number },
    { "maximum", Shape::Number },
    { "exclusiveMinimum", Shape::Number },
    { "exclusiveMaximum", Shape::Number },
    { "format", Shape::Format },
    { "title", Shape::Any },
    { "description", Shape::Any },
    { "default", Shape::Any },
    { "examples", Shape::Any },
    { "$schema", Shape::Any },
    { "$defs", Shape::Schemas },
    { "$ref", Shape::Ref },
    { "$anchor", Shape::Text },      // names its schema; references use #/$defs/ paths only
    { "x-mcp-header", Shape::Text }, // 2026-07-28: the argument is mirrored in an HTTP header
    { "const", Shape::Scalar },
    // Applicators: each only narrows what the schema around it accepts.
    { "allOf", Shape::SchemaList },
    { "anyOf", Shape::SchemaList },
    { "oneOf", Shape::SchemaList },
    { "not", Shape::Schema },
    { "if", Shape::Schema },
    { "then", Shape::Schema },
    { "else", Shape::Schema },
};

// The applicators whose subschemas the walks follow: lists, then single schemas.
constexpr const char* kListApplicators[] = { "allOf", "anyOf", "oneOf" };
constexpr const char* kSchemaApplicators[] = { "not", "if", "then", "else" };
constexpr uint32_t kMaxApplicatorItems = 16; // subschemas of one allOf/anyOf/oneOf

constexpr std::string_view kRefPrefix = "#/$defs/";

// The definition a "$ref" names: only "#/$defs/NAME" of the root schema (no remote or
// JSON-pointer-escaped references). Invalid when it does not resolve.
json::Value resolve_ref(const json::Value& root, const json::Value& ref) {
    auto text = ref.plain_string();
    if (!text || text->substr(0, kRefPrefix.size()) != kRefPrefix)
        return {};
    return root.find("$defs").find(text->substr(kRefPrefix.size()));
}

// Beside "$ref" only annotations and definitions: what the reference names is the whole schema.
bool ref_alone(const json::Value& schema) {
    for (json::Value m = schema.first(); m.valid(); m = m.next_sibling())
        if (!m.key_equals("$ref") && !m.key_equals("title") && !m.key_equals("description") && !m.key_equals("$defs") &&
            !m.key_equals("$schema"))
            return false;
    return true;
}

bool fits_name(const json::Value& v, bool key) {
    char buf[kMaxPropertyName];
    return key ? v.key_into({ buf, sizeof buf }).ok() : v.is_string() && v.string_into({ buf, sizeof buf }).ok();
}

bool shape_ok(Shape shape, const json::Value& v) {
    switch (shape) {
    case Shape::Any: return true;
    case Shape::Type: return type_keyword_bits(v) != 0;
    case Shape::Schema: return v.is_object();
    case Shape::BoolOrSchema: return v.is_bool() || v.is_object();
    case Shape::Count: return v.as_uint64().has_value();
    case Shape::Number: return bound_number(v);
    case Shape::Format: return v.string_equals("name") || v.string_equals("path");
    case Shape::Text: return v.is_string();
    case Shape::Scalar: return !v.is_array() && !v.is_object() && (!v.is_number() || bound_number(v));
    case Shape::SchemaList:
        if (!v.is_array() || v.size() == 0 || v.size() > kMaxApplicatorItems)
            return false;
        for (json::Value e = v.first(); e.valid(); e = e.next_sibling())
            if (!e.is_object())
                return false;
        return true;
    case Shape::Ref: return v.is_string() && v.plain_string().value_or("").substr(0, kRefPrefix.size()) == kRefPrefix;
    case Shape::Enum:
        if (!v.is_array())
            return false;
        for (json::Value e = v.first(); e.valid(); e = e.next_sibling())
            if (e.is_array() || e.is_object() || (e.is_number() && !bound_number(e)))
                return false;
        return true;
    case Shape::Names:
        if (!v.is_array())
            return false;
        for (json::Value n = v.first(); n.valid(); n = n.next_sibling())
            if (!fits_name(n, false))
                return false;
        return true;
    case Shape::Schemas:
        if (!v.is_object())
            return false;
        for (json::Value p = v.first(); p.valid(); p = p.next_sibling())
            if (!p.is_object() || !fits_name(p, true))
                return false;
        return true;
    }
    return false;
}

[[gnu::noinline]] bool keywords_ok(const json::Value& schema, Failure& f, Pointer& at) {
    for (json::Value m = schema.first(); m.valid(); m = m.next_sibling()) {
        const Keyword* known = nullptr;
        for (const Keyword& k : kKeywords) {
            if (m.key_equals(k.name)) {
                known = &k;
                break;
            }
        }
        if (!known) {
            at.push_key(m);
            return fail(f, Reason::SchemaUnsupported, "", "unsupported keyword");
        }
        if (!shape_ok(known->shape, m))
            return fail(f, Reason::SchemaUnsupported, known->name, "unsupported value for this keyword");
    }
    return true;
}

[[gnu::noinline]] bool bounds_ok(const json::Value& s, Failure& f) {
    if (s.find("enum").valid())
        return true; // the enum's own members are the only values
    if (!s.find("type").valid())
        return fail(f, Reason::Unbounded, "type", "schema without type or enum accepts anything");
    uint32_t types = allowed_types(s);
    if ((types & kString) && !s.find("maxLength").valid())
        return fail(f, Reason::Unbounded, "maxLength", "string without maxLength");
    if (types & (kInteger | kNumber)) {
        if (!s.find("minimum").valid() && !s.find("exclusiveMinimum").valid())
            return fail(f, Reason::Unbounded, "minimum", "number without a lower bound");
        if (!s.find("maximum").valid() && !s.find("exclusiveMaximum").valid())
            return fail(f, Reason::Unbounded, "maximum", "number without an upper bound");
    }
    if (types & kArray) {
        if (!s.find("maxItems").valid())
            return fail(f, Reason::Unbounded, "maxItems", "array without maxItems");
        if (!s.find("items").valid())
            return fail(f, Reason::Unbounded, "items", "array without an items schema");
    }
    if (types & kObject) {
        json::Value extra = s.find("additionalProperties");
        if (!extra.valid() || extra.as_bool() == true)
            return fail(f, Reason::Unbounded, "additionalProperties",
                        "object without additionalProperties false or a schema");
    }
    return true;
}

class SchemaWalker {
public:
    SchemaWalker(const json::Value& root, Failure& f, Pointer& at, int max_depth, bool bounded)
        : m_root(root), m_f(f), m_at(at), m_max_depth(max_depth), m_bounded(bounded) {}

    bool walk(const json::Value& s, int depth) {
        if (depth > m_max_depth)
            return fail(m_f, Reason::SchemaUnsupported, "", "schema nested too deeply");
        if (!s.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "", "schema is not an object");
        if (!keywords_ok(s, m_f, m_at))
            return false;
        // A reference is as bounded as its definition, which is walked under $defs (once: a
        // definition that refers to itself does not make the walk recurse).
        if (json::Value ref = s.find("$ref"); ref.valid()) {
            if (!ref_alone(s))
                return fail(m_f, Reason::SchemaUnsupported, "$ref", "keywords beside $ref");
            if (!resolve_ref(m_root, ref).is_object())
                return fail(m_f, Reason::SchemaUnsupported, "$ref", "$ref names no definition in the root's $defs");
            return walk_defs(s, depth);
        }
        if (m_bounded && !bounds_ok(s, m_f))
            return false;
        if (!walk_defs(s, depth))
            return false;
        json::Value props = s.find("properties");
        for (json::Value p = props.first(); p.valid(); p = p.next_sibling())
            if (!below(p, "properties", &p, depth))
                return false;
        json::Value extra = s.find("additionalProperties");
        if (extra.is_object() && !below(extra, "additionalProperties", nullptr, depth))
            return false;
        json::Value items = s.find("items");
        if (items.valid() && !below(items, "items", nullptr, depth))
            return false;
        return applicators(s, depth);
    }

private:
    // Subschemas of allOf/anyOf/oneOf/not/if/then/else: every keyword known and well formed, but
    // no bounds of their own: they only narrow the schema they sit in, which carries the bounds.
    bool applicators(const json::Value& s, int depth) {
        bool bounded = m_bounded;
        m_bounded = false;
        bool ok = true;
        for (const char* k : kListApplicators) {
            uint32_t index = 0;
            for (json::Value e = s.find(k).first(); ok && e.valid(); e = e.next_sibling(), ++index) {
                Pointer::Mark mark = m_at.mark();
                m_at.push_token(k);
                m_at.push_index(index);
                ok = walk(e, depth + 1);
                if (ok)
                    m_at.reset(mark);
            }
        }
        for (const char* k : kSchemaApplicators)
            if (json::Value sub = s.find(k); ok && sub.valid())
                ok = below(sub, k, nullptr, depth);
        m_bounded = bounded;
        return ok;
    }

    bool walk_defs(const json::Value& s, int depth) {
        json::Value defs = s.find("$defs");
        for (json::Value d = defs.first(); d.valid(); d = d.next_sibling())
            if (!below(d, "$defs", &d, depth))
                return false;
        return true;
    }

    bool below(const json::Value& sub, const char* keyword, const json::Value* member, int depth) {
        Pointer::Mark mark = m_at.mark();
        m_at.push_token(keyword);
        if (member)
            m_at.push_key(*member);
        if (!walk(sub, depth + 1))
            return false;
        m_at.reset(mark);
        return true;
    }

    json::Value m_root;
    Failure& m_f;
    Pointer& m_at;
    int m_max_depth;
    bool m_bounded;
};

// ---------------------------------------------------------------------------------------------
// The instance pass (the schema has passed the schema pass).

bool check_string(const json::Value& s, const json::Value& v, Failure& f) {
    json::Value min = s.find("minLength"), max = s.find("maxLength");
    if (min.valid() || max.valid()) {
        uint64_t length = code_point_count(v.raw());
        if (min.valid() && length < min.as_uint64().value_or(0))
            return fail(f, Reason::TooShort, "minLength", "string shorter than minLength");
        if (max.valid() && length > max.as_uint64().value_or(0))
            return fail(f, Reason::TooLong, "maxLength", "string longer than maxLength");
    }
    if (json::Value format = s.find("format"); format.valid() && !good_name(v.raw(), format.string_equals("path")))
        return fail(f, Reason::BadName, "format", "not a valid name or path");
    return true;
}

// The value must lie on the `side` of the bound (+1 above, -1 below), or on it unless strict.
constexpr struct {
    const char* keyword;
    int side;
    bool strict;
    Reason reason;
    const char* message;
} kBounds[] = {
    { "minimum", 1, false, Reason::BelowMinimum, "number below minimum" },
    { "exclusiveMinimum", 1, true, Reason::BelowMinimum, "number not above exclusiveMinimum" },
    { "maximum", -1, false, Reason::AboveMaximum, "number above maximum" },
    { "exclusiveMaximum", -1, true, Reason::AboveMaximum, "number not below exclusiveMaximum" },
};
constexpr size_t kBoundCount = sizeof kBounds / sizeof kBounds[0];

// `value` against bound `i` of kBounds at `limit`.
bool within_bound(const Decimal& value, size_t i, const Decimal& limit, Failure& f) {
    int side = compare(value, limit) * kBounds[i].side;
    if (side < 0 || (side == 0 && kBounds[i].strict))
        return fail(f, kBounds[i].reason, kBounds[i].keyword, kBounds[i].message);
    return true;
}

// `value` against the bounds, nullopt where a bound is absent.
bool within(const Decimal& value, const std::optional<Decimal> (&limits)[kBoundCount], Failure& f) {
    for (size_t i = 0; i < kBoundCount; ++i)
        if (limits[i] && !within_bound(value, i, *limits[i], f))
            return false;
    return true;
}

bool check_number(const json::Value& s, const json::Value& v, Failure& f) {
    auto value = number(v);
    if (!value)
        return fail(f, Reason::Type, "type", "unreadable number");
    // Bound by bound, in kBounds' order: a later unreadable bound is not reached past a failed one.
    for (size_t i = 0; i < kBoundCount; ++i) {
        json::Value bound = s.find(kBounds[i].keyword);
        if (!bound.valid())
            continue;
        auto limit = number(bound);
        if (!limit)
            return fail(f, Reason::SchemaUnsupported, kBounds[i].keyword, "unsupported value for this keyword");
        if (!within_bound(*value, i, *limit, f))
            return false;
    }
    return true;
}

// An items schema that only types numbers and bounds them (a vector's components, a list of ids),
// read once for a whole array instead of once per element: a 4,096-component vector used to walk
// its keywords 4,096 times. check_array gives each element the outcome, failure and path check()
// would give it.
struct NumberRule {
    uint32_t types = 0;
    std::optional<Decimal> limits[kBoundCount];
};

bool number_rule(const json::Value& s, NumberRule& rule) {
    static constexpr std::string_view kPlain[] = { "type", "description", "title" };
    if (!s.is_object())
        return false;
    for (json::Value m = s.first(); m.valid(); m = m.next_sibling()) {
        bool known = false;
        for (std::string_view k : kPlain)
            known = known || m.key_equals(k);
        for (size_t i = 0; i < kBoundCount && !known; ++i) {
            if (m.key_equals(kBounds[i].keyword)) {
                known = true;
                rule.limits[i] = number(m);
                if (!rule.limits[i])
                    return false; // check() reports it
            }
        }
        if (!known)
            return false; // $ref, enum, const, applicators, string keywords...: the whole walk
    }
    rule.types = allowed_types(s);
    return rule.types != 0 && (rule.types & ~(kInteger | kNumber)) == 0;
}

// The first required name `v` lacks, appended to the pointer; false if there is one.
[[gnu::noinline]] bool required_present(const json::Value& required, const json::Value& v, Pointer& at) {
    for (json::Value name = required.first(); name.valid(); name = name.next_sibling()) {
        char buf[kMaxPropertyName];
        auto n = name.string_into({ buf, sizeof buf });
        std::string_view text = n ? std::string_view(buf, *n) : std::string_view();
        if (!n || !v.find(text).valid()) {
            at.push_token(text, n.ok());
            return false;
        }
    }
    return true;
}

// The schema in `properties` for an instance member, compared on unescaped names.
[[gnu::noinline]] json::Value property_schema(const json::Value& props, const json::Value& member) {
    for (json::Value p = props.first(); p.valid(); p = p.next_sibling()) {
        char buf[kMaxPropertyName];
        auto n = p.key_into({ buf, sizeof buf });
        if (n && member.key_equals({ buf, *n }))
            return p;
    }
    return {};
}

class InstanceWalker {
public:
    InstanceWalker(const json::Value& root, Failure& f, Pointer& at) : m_root(root), m_f(f), m_at(at) {}

    bool check(const json::Value& schema, const json::Value& v, int depth) {
        // A reference stands for its definition (the schema pass resolved it); following one
        // costs a level, so a definition that refers to itself ends at kMaxSchemaDepth.
        json::Value ref = schema.find("$ref");
        json::Value s = ref.valid() ? resolve_ref(m_root, ref) : schema;
        if (depth > kMaxSchemaDepth || !s.is_object()) // the schema pass has refused these already
            return fail(m_f, Reason::SchemaUnsupported, "", "schema nested too deeply or not an object");
        if (!v.valid())
            return fail(m_f, Reason::Type, "type", "no value");
        if (!(instance_types(v) & allowed_types(s)))
            return fail(m_f, Reason::Type, "type", "value of the wrong type");
        if (json::Value e = s.find("enum"); e.valid() && !in_enum(e, v))
            return fail(m_f, Reason::NotInEnum, "enum", "value not in enum");
        if (json::Value c = s.find("const"); c.valid() && !same_value(c, v))
            return fail(m_f, Reason::NotInEnum, "const", "value is not the constant");
        bool ok = true;
        switch (v.type()) {
        case json::Type::String: ok = check_string(s, v, m_f); break;
        case json::Type::Number: ok = check_number(s, v, m_f); break;
        case json::Type::Array: ok = check_array(s, v, depth); break;
        case json::Type::Object: ok = check_object(s, v, depth); break;
        default: break;
        }
        return ok && applicators(s, v, depth);
    }

private:
    // Whether v satisfies sub, without reporting: the branches of anyOf/oneOf/not/if are tried.
    // A branch that cannot be evaluated (nested too deeply) is no "no": it fails the whole
    // check (Error), so that not/else never turn it into an acceptance.
    enum class Outcome : uint8_t { Match, NoMatch, Error };
    [[gnu::noinline]] Outcome satisfies(const json::Value& sub, const json::Value& v, int depth) {
        Failure scratch;
        Pointer at(scratch.path);
        if (InstanceWalker(m_root, scratch, at).check(sub, v, depth + 1))
            return Outcome::Match;
        if (scratch.reason != Reason::SchemaUnsupported)
            return Outcome::NoMatch;
        fail(m_f, Reason::SchemaUnsupported, scratch.keyword, scratch.message);
        return Outcome::Error;
    }

    bool applicators(const json::Value& s, const json::Value& v, int depth) {
        for (json::Value e = s.find("allOf").first(); e.valid(); e = e.next_sibling())
            if (!check(e, v, depth + 1))
                return false;
        if (json::Value any = s.find("anyOf"); any.valid()) {
            bool found = false;
            for (json::Value e = any.first(); e.valid() && !found; e = e.next_sibling()) {
                Outcome o = satisfies(e, v, depth);
                if (o == Outcome::Error)
                    return false;
                found = o == Outcome::Match;
            }
            if (!found)
                return fail(m_f, Reason::NoAlternative, "anyOf", "value matches none of the anyOf schemas");
        }
        if (json::Value one = s.find("oneOf"); one.valid()) {
            uint32_t matched = 0;
            for (json::Value e = one.first(); e.valid() && matched < 2; e = e.next_sibling()) {
                Outcome o = satisfies(e, v, depth);
                if (o == Outcome::Error)
                    return false;
                matched += o == Outcome::Match;
            }
            if (matched != 1)
                return fail(m_f, Reason::NoAlternative, "oneOf",
                            matched ? "value matches more than one oneOf schema"
                                    : "value matches none of the oneOf schemas");
        }
        if (json::Value no = s.find("not"); no.valid()) {
            Outcome o = satisfies(no, v, depth);
            if (o == Outcome::Error)
                return false;
            if (o == Outcome::Match)
                return fail(m_f, Reason::NoAlternative, "not", "value matches the schema under not");
        }
        if (json::Value cond = s.find("if"); cond.valid()) {
            Outcome o = satisfies(cond, v, depth);
            if (o == Outcome::Error)
                return false;
            bool holds = o == Outcome::Match;
            json::Value branch = s.find(holds ? "then" : "else");
            if (branch.valid() && !check(branch, v, depth + 1))
                return false;
        }
        return true;
    }

    static bool in_enum(const json::Value& e, const json::Value& v) {
        for (json::Value c = e.first(); c.valid(); c = c.next_sibling())
            if (same_value(c, v))
                return true;
        return false;
    }

    bool check_array(const json::Value& s, const json::Value& v, int depth) {
        json::Value min = s.find("minItems"), max = s.find("maxItems");
        if (min.valid() && v.size() < min.as_uint64().value_or(0))
            return fail(m_f, Reason::TooFewItems, "minItems", "fewer items than minItems");
        if (max.valid() && v.size() > max.as_uint64().value_or(0))
            return fail(m_f, Reason::TooManyItems, "maxItems", "more items than maxItems");
        json::Value items = s.find("items");
        if (!items.valid())
            return true;
        if (NumberRule rule; depth + 1 <= kMaxSchemaDepth && number_rule(items, rule))
            return numbers(rule, v);
        uint32_t index = 0;
        for (json::Value item = v.first(); item.valid(); item = item.next_sibling(), ++index) {
            Pointer::Mark mark = m_at.mark();
            m_at.push_index(index);
            if (!check(items, item, depth + 1))
                return false;
            m_at.reset(mark);
        }
        return true;
    }

    // check(items, item) for every item under a NumberRule: the type, then the bounds.
    bool numbers(const NumberRule& rule, const json::Value& v) {
        uint32_t index = 0;
        for (json::Value item = v.first(); item.valid(); item = item.next_sibling(), ++index) {
            auto value = number(item);
            uint32_t types = !item.is_number()            ? instance_types(item)
                             : value && value->integral() ? (kNumber | kInteger)
                                                          : kNumber;
            bool ok = !(types & rule.types) ? fail(m_f, Reason::Type, "type", "value of the wrong type")
                      : !value              ? fail(m_f, Reason::Type, "type", "unreadable number")
                                            : within(*value, rule.limits, m_f);
            if (!ok) {
                m_at.push_index(index);
                return false;
            }
        }
        return true;
    }

    bool check_object(const json::Value& s, const json::Value& v, int depth) {
        if (json::Value required = s.find("required"); required.valid() && !required_present(required, v, m_at))
            return fail(m_f, Reason::Required, "required", "required member missing");
        json::Value props = s.find("properties");
        json::Value extra = s.find("additionalProperties");
        for (json::Value member = v.first(); member.valid(); member = member.next_sibling()) {
            json::Value sub = property_schema(props, member);
            Pointer::Mark mark = m_at.mark();
            m_at.push_key(member);
            if (!sub.valid() && extra.is_bool()) {
                if (extra.as_bool() == false)
                    return fail(m_f, Reason::AdditionalProperty, "additionalProperties", "member not allowed");
            } else if (sub.valid() || extra.valid()) {
                if (!check(sub.valid() ? sub : extra, member, depth + 1))
                    return false;
            }
            m_at.reset(mark);
        }
        return true;
    }

    json::Value m_root;
    Failure& m_f;
    Pointer& m_at;
};

} // namespace

const char* reason_name(Reason reason) {
    switch (reason) {
    case Reason::None: return "none";
    case Reason::Type: return "type";
    case Reason::Required: return "required";
    case Reason::AdditionalProperty: return "additional_property";
    case Reason::TooShort: return "too_short";
    case Reason::TooLong: return "too_long";
    case Reason::BelowMinimum: return "below_minimum";
    case Reason::AboveMaximum: return "above_maximum";
    case Reason::NotInEnum: return "not_in_enum";
    case Reason::TooFewItems: return "too_few_items";
    case Reason::TooManyItems: return "too_many_items";
    case Reason::BadName: return "bad_name";
    case Reason::Unbounded: return "unbounded";
    case Reason::SchemaUnsupported: return "schema_unsupported";
    case Reason::NoAlternative: return "no_alternative";
    }
    return "unknown";
}

bool validate(const json::Value& schema, const json::Value& instance, Failure& out) {
    return check_schema(schema, out) && validate_instance(schema, instance, out);
}

bool check_schema(const json::Value& schema, Failure& out) {
    out = Failure {};
    Pointer at(out.path);
    return SchemaWalker(schema, out, at, kMaxSchemaDepth, false).walk(schema, 1);
}

bool validate_instance(const json::Value& schema, const json::Value& instance, Failure& out) {
    out = Failure {};
    Pointer at(out.path);
    return InstanceWalker(schema, out, at).check(schema, instance, 1);
}

bool check_bounded(const json::Value& schema, Failure& out) {
    out = Failure {};
    Pointer at(out.path);
    return SchemaWalker(schema, out, at, kMaxBoundedDepth, true).walk(schema, 1);
}

} // namespace mcp::schema

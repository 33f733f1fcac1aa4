#include "validator.h"

#include <optional>
#include <string_view>

namespace mcp::schema {
namespace {

enum TypeBit : uint32_t {
    kNull = 1, kBool = 2, kInteger = 4, kNumber = 8, kString = 16, kArray = 32, kObject = 64,
};

// Builds a JSON pointer incrementally; a path too long for the buffer ends in "...".
class Pointer {
public:
    explicit Pointer(Failure& f) : m_f(f) { m_f.path[0] = '\0'; }
    size_t mark() const { return m_len; }
    void reset(size_t mark) {
        m_len = mark;
        m_f.path[m_len] = '\0';
    }
    void push_key(const json::Value& member) {
        put('/');
        char key[64];
        auto n = member.key_into({ key, sizeof key });
        std::string_view k = n ? std::string_view(key, *n) : std::string_view("...");
        for (char c : k) {
            // RFC 6901 escapes.
            if (c == '~') {
                put('~');
                put('0');
            } else if (c == '/') {
                put('~');
                put('1');
            } else {
                put(c);
            }
        }
    }
    void push_name(std::string_view name) {
        put('/');
        for (char c : name)
            put(c);
    }
    void push_index(uint32_t i) {
        put('/');
        char digits[10];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + i % 10);
            i /= 10;
        } while (i && n < 10);
        while (n)
            put(digits[--n]);
    }

private:
    void put(char c) {
        constexpr size_t cap = sizeof(Failure::path);
        if (m_len + 1 >= cap) {
            m_f.path[cap - 4] = m_f.path[cap - 3] = m_f.path[cap - 2] = '.';
            m_f.path[cap - 1] = '\0';
            return;
        }
        m_f.path[m_len++] = c;
        m_f.path[m_len] = '\0';
    }
    Failure& m_f;
    size_t m_len = 0;
};

bool fail(Failure& f, Reason r, const char* keyword) {
    f.reason = r;
    f.keyword = keyword;
    return false;
}

std::optional<uint32_t> type_bit(const json::Value& name) {
    static constexpr struct {
        const char* name;
        uint32_t bit;
    } kTypes[] = { { "null", kNull }, { "boolean", kBool }, { "integer", kInteger }, { "number", kNumber },
                   { "string", kString }, { "array", kArray }, { "object", kObject } };
    for (const auto& t : kTypes)
        if (name.string_equals(t.name))
            return t.bit;
    return std::nullopt;
}

// An integer in JSON Schema's sense: a number with no fractional part ("1.0" counts).
bool is_integer(const json::Value& v) {
    if (v.as_int64() || v.as_uint64())
        return true;
    // Beyond 2^53 every double is integral; below it, compare with its truncation (the range
    // is checked before the cast, which is undefined outside int64_t).
    auto d = v.as_double();
    if (!d)
        return false;
    if (*d >= 9007199254740992.0 || *d <= -9007199254740992.0)
        return true;
    return *d == static_cast<double>(static_cast<int64_t>(*d));
}

uint32_t instance_bits(const json::Value& v) {
    switch (v.type()) {
    case json::Type::Null: return kNull;
    case json::Type::Bool: return kBool;
    case json::Type::Number: return is_integer(v) ? (kInteger | kNumber) : kNumber;
    case json::Type::String: return kString;
    case json::Type::Array: return kArray;
    case json::Type::Object: return kObject;
    }
    return 0;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// Code points of a string value, counted on its raw (escaped) text without decoding it: the
// parser has already validated the UTF-8 and the escapes (surrogates pair up).
uint64_t code_points(const json::Value& v) {
    std::string_view raw = v.raw();
    uint64_t n = 0;
    for (size_t i = 0; i < raw.size();) {
        if (raw[i] != '\\') {
            n += (static_cast<unsigned char>(raw[i]) & 0xc0) != 0x80;
            ++i;
            continue;
        }
        if (i + 1 < raw.size() && raw[i + 1] == 'u' && i + 5 < raw.size()) {
            int hi = hex_value(raw[i + 2]);
            int second = hex_value(raw[i + 3]);
            bool high_surrogate = hi == 0xd && second >= 8 && second <= 0xb;
            i += 6;
            if (high_surrogate && i + 1 < raw.size() && raw[i] == '\\' && raw[i + 1] == 'u')
                i += 6; // the low half of the pair: one code point for both
            ++n;
            continue;
        }
        i += 2;
        ++n;
    }
    return n;
}

bool name_char(char c, bool slash) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c == ':' || (slash && c == '/');
}

// "name": one segment; "path": segments joined by '/'. Neither may be empty, start with '.',
// or contain "..".
bool good_name(std::string_view s, bool path) {
    if (s.empty())
        return false;
    size_t seg_start = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || (path && s[i] == '/')) {
            std::string_view seg = s.substr(seg_start, i - seg_start);
            if (seg.empty() || seg[0] == '.' || seg.find("..") != std::string_view::npos)
                return false;
            seg_start = i + 1;
            continue;
        }
        if (!name_char(s[i], path))
            return false;
    }
    return true;
}

bool number_cmp(const json::Value& a, const json::Value& b, int& out) {
    // Exact for integers; doubles otherwise.
    auto ai = a.as_int64(), bi = b.as_int64();
    if (ai && bi) {
        out = *ai < *bi ? -1 : *ai > *bi ? 1 : 0;
        return true;
    }
    auto ad = a.as_double(), bd = b.as_double();
    if (!ad || !bd)
        return false;
    out = *ad < *bd ? -1 : *ad > *bd ? 1 : 0;
    return true;
}

bool values_equal(const json::Value& a, const json::Value& b) {
    if (a.type() != b.type())
        return false;
    switch (a.type()) {
    case json::Type::Null: return true;
    case json::Type::Bool: return a.as_bool() == b.as_bool();
    case json::Type::Number: {
        int c = 0;
        return number_cmp(a, b, c) && c == 0;
    }
    case json::Type::String: {
        if (auto plain = b.plain_string())
            return a.string_equals(*plain);
        char buf[256]; // escaped enum members longer than this never match
        auto n = b.string_into({ buf, sizeof buf });
        return n && a.string_equals({ buf, *n });
    }
    default: return false; // enum of arrays/objects is not supported (rejected as a schema)
    }
}

bool is_annotation(const json::Value& member) {
    for (const char* k : { "title", "description", "default", "examples", "$schema" })
        if (member.key_equals(k))
            return true;
    return false;
}

class Validator {
public:
    explicit Validator(Failure& f) : m_f(f), m_ptr(f) {}

    bool check(const json::Value& schema, const json::Value& v, int depth) {
        if (depth > kMaxSchemaDepth || !schema.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "depth");
        // Fail closed on anything we do not enforce.
        for (json::Value m = schema.first(); m.valid(); m = m.next_sibling())
            if (!known_keyword(m) && !is_annotation(m))
                return fail(m_f, Reason::SchemaUnsupported, "unknown keyword");

        if (json::Value t = schema.find("type"); t.valid()) {
            uint32_t allowed = 0;
            if (t.is_string()) {
                auto b = type_bit(t);
                if (!b)
                    return fail(m_f, Reason::SchemaUnsupported, "type");
                allowed = *b;
            } else if (t.is_array()) {
                for (json::Value e = t.first(); e.valid(); e = e.next_sibling()) {
                    auto b = type_bit(e);
                    if (!b)
                        return fail(m_f, Reason::SchemaUnsupported, "type");
                    allowed |= *b;
                }
            } else {
                return fail(m_f, Reason::SchemaUnsupported, "type");
            }
            if (!(instance_bits(v) & allowed))
                return fail(m_f, Reason::Type, "type");
        }
        if (json::Value e = schema.find("enum"); e.valid()) {
            if (!e.is_array())
                return fail(m_f, Reason::SchemaUnsupported, "enum");
            bool found = false;
            for (json::Value c = e.first(); c.valid() && !found; c = c.next_sibling()) {
                if (c.is_array() || c.is_object())
                    return fail(m_f, Reason::SchemaUnsupported, "enum");
                found = values_equal(v, c);
            }
            if (!found)
                return fail(m_f, Reason::NotInEnum, "enum");
        }
        switch (v.type()) {
        case json::Type::String: return check_string(schema, v);
        case json::Type::Number: return check_number(schema, v);
        case json::Type::Array: return check_array(schema, v, depth);
        case json::Type::Object: return check_object(schema, v, depth);
        default: return true;
        }
    }

private:
    static bool known_keyword(const json::Value& m) {
        for (const char* k : { "type", "required", "properties", "additionalProperties", "minLength", "maxLength", "minimum",
                               "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "items", "minItems", "maxItems",
                               "format" })
            if (m.key_equals(k))
                return true;
        return false;
    }

    bool check_string(const json::Value& schema, const json::Value& v) {
        json::Value min = schema.find("minLength"), max = schema.find("maxLength");
        if (min.valid() || max.valid()) {
            uint64_t n = code_points(v);
            if (min.valid() && (!min.as_uint64() || n < *min.as_uint64()))
                return fail(m_f, min.as_uint64() ? Reason::TooShort : Reason::SchemaUnsupported, "minLength");
            if (max.valid() && (!max.as_uint64() || n > *max.as_uint64()))
                return fail(m_f, max.as_uint64() ? Reason::TooLong : Reason::SchemaUnsupported, "maxLength");
        }
        if (json::Value fmt = schema.find("format"); fmt.valid()) {
            bool path = fmt.string_equals("path");
            if (!path && !fmt.string_equals("name"))
                return fail(m_f, Reason::SchemaUnsupported, "format");
            char buf[512]; // longer names and paths are refused
            auto n = v.string_into({ buf, sizeof buf });
            if (!n || !good_name({ buf, *n }, path))
                return fail(m_f, Reason::BadName, "format");
        }
        return true;
    }

    bool check_number(const json::Value& schema, const json::Value& v) {
        struct Bound {
            const char* key;
            Reason reason;
            bool (*ok)(int);
        };
        static constexpr Bound kBounds[] = {
            { "minimum", Reason::BelowMinimum, [](int c) { return c >= 0; } },
            { "maximum", Reason::AboveMaximum, [](int c) { return c <= 0; } },
            { "exclusiveMinimum", Reason::BelowMinimum, [](int c) { return c > 0; } },
            { "exclusiveMaximum", Reason::AboveMaximum, [](int c) { return c < 0; } },
        };
        for (const auto& b : kBounds) {
            json::Value limit = schema.find(b.key);
            if (!limit.valid())
                continue;
            int c = 0;
            if (!limit.is_number() || !number_cmp(v, limit, c))
                return fail(m_f, Reason::SchemaUnsupported, b.key);
            if (!b.ok(c))
                return fail(m_f, b.reason, b.key);
        }
        return true;
    }

    bool check_array(const json::Value& schema, const json::Value& v, int depth) {
        json::Value min = schema.find("minItems"), max = schema.find("maxItems");
        if (min.valid() && (!min.as_uint64() || v.size() < *min.as_uint64()))
            return fail(m_f, min.as_uint64() ? Reason::TooFewItems : Reason::SchemaUnsupported, "minItems");
        if (max.valid() && (!max.as_uint64() || v.size() > *max.as_uint64()))
            return fail(m_f, max.as_uint64() ? Reason::TooManyItems : Reason::SchemaUnsupported, "maxItems");
        json::Value items = schema.find("items");
        if (!items.valid())
            return true;
        uint32_t i = 0;
        for (json::Value e = v.first(); e.valid(); e = e.next_sibling(), ++i) {
            size_t mark = m_ptr.mark();
            m_ptr.push_index(i);
            if (!check(items, e, depth + 1))
                return false;
            m_ptr.reset(mark);
        }
        return true;
    }

    bool check_object(const json::Value& schema, const json::Value& v, int depth) {
        json::Value props = schema.find("properties");
        if (props.valid() && !props.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "properties");
        if (json::Value req = schema.find("required"); req.valid()) {
            if (!req.is_array())
                return fail(m_f, Reason::SchemaUnsupported, "required");
            for (json::Value name = req.first(); name.valid(); name = name.next_sibling()) {
                auto text = name.plain_string();
                if (!text)
                    return fail(m_f, Reason::SchemaUnsupported, "required");
                if (!v.find(*text).valid()) {
                    m_ptr.push_name(*text);
                    return fail(m_f, Reason::Required, "required");
                }
            }
        }
        json::Value extra = schema.find("additionalProperties");
        if (extra.valid() && !extra.is_bool() && !extra.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "additionalProperties");
        for (json::Value m = v.first(); m.valid(); m = m.next_sibling()) {
            json::Value sub;
            for (json::Value p = props.valid() ? props.first() : json::Value(); p.valid(); p = p.next_sibling()) {
                char key[128];
                auto n = m.key_into({ key, sizeof key });
                if (n && p.key_equals({ key, *n })) {
                    sub = p;
                    break;
                }
            }
            size_t mark = m_ptr.mark();
            m_ptr.push_key(m);
            if (!sub.valid()) {
                if (extra.is_bool() && extra.as_bool() == false)
                    return fail(m_f, Reason::AdditionalProperty, "additionalProperties");
                if (extra.is_object() && !check(extra, m, depth + 1))
                    return false;
            } else if (!check(sub, m, depth + 1)) {
                return false;
            }
            m_ptr.reset(mark);
        }
        return true;
    }

    Failure& m_f;
    Pointer m_ptr;
};

class BoundsChecker {
public:
    explicit BoundsChecker(Failure& f) : m_f(f), m_ptr(f) {}

    bool check(const json::Value& s, int depth) {
        if (depth > kMaxSchemaDepth || !s.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "depth");
        json::Value t = s.find("type");
        auto bit = t.is_string() ? type_bit(t) : std::nullopt;
        if (!bit && !s.find("enum").valid())
            return fail(m_f, Reason::Unbounded, "type");
        uint32_t b = bit.value_or(0);
        if (b == kString && !s.find("maxLength").valid() && !s.find("enum").valid())
            return fail(m_f, Reason::Unbounded, "maxLength");
        if ((b == kInteger || b == kNumber) && (!(s.find("minimum").valid() || s.find("exclusiveMinimum").valid()) ||
                                                !(s.find("maximum").valid() || s.find("exclusiveMaximum").valid())))
            return fail(m_f, Reason::Unbounded, "minimum/maximum");
        if (b == kArray) {
            if (!s.find("maxItems").valid())
                return fail(m_f, Reason::Unbounded, "maxItems");
            json::Value items = s.find("items");
            if (!items.valid())
                return fail(m_f, Reason::Unbounded, "items");
            size_t mark = m_ptr.mark();
            m_ptr.push_name("items");
            if (!check(items, depth + 1))
                return false;
            m_ptr.reset(mark);
        }
        if (b == kObject) {
            json::Value extra = s.find("additionalProperties");
            if (!extra.valid() || (extra.is_bool() && extra.as_bool() == true))
                return fail(m_f, Reason::Unbounded, "additionalProperties");
            if (extra.is_object() && !check(extra, depth + 1))
                return false;
            json::Value props = s.find("properties");
            for (json::Value p = props.valid() ? props.first() : json::Value(); p.valid(); p = p.next_sibling()) {
                size_t mark = m_ptr.mark();
                m_ptr.push_name("properties");
                m_ptr.push_key(p);
                if (!check(p, depth + 1))
                    return false;
                m_ptr.reset(mark);
            }
        }
        // Every keyword must be one the validator enforces (probe with an empty instance of
        // the declared type is not needed: the keyword list is the same).
        for (json::Value m = s.first(); m.valid(); m = m.next_sibling()) {
            bool known = is_annotation(m);
            for (const char* k : { "type", "required", "properties", "additionalProperties", "minLength", "maxLength",
                                   "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "items",
                                   "minItems", "maxItems", "format" })
                known = known || m.key_equals(k);
            if (!known)
                return fail(m_f, Reason::SchemaUnsupported, "unknown keyword");
        }
        return true;
    }

private:
    Failure& m_f;
    Pointer m_ptr;
};

} // namespace

const char* reason_name(Reason r) {
    switch (r) {
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
    case Reason::BadName: return "invalid_name";
    case Reason::Unbounded: return "unbounded";
    case Reason::SchemaUnsupported: return "schema_unsupported";
    }
    return "?";
}

bool validate(const json::Value& schema, const json::Value& instance, Failure& out) {
    out = Failure {};
    Validator v(out);
    return v.check(schema, instance, 0);
}

bool check_bounded(const json::Value& schema, Failure& out) {
    out = Failure {};
    BoundsChecker c(out);
    return c.check(schema, 0);
}

} // namespace mcp::schema

// JSON Schema subset for tool arguments (see validator.h). Two passes: the schema alone (every
// keyword known and well formed, depth bounded, and for check_bounded every bound present), then
// the instance against it. Recursive functions keep small frames; buffers live in leaf helpers.
#include "validator.h"

#include <optional>
#include <string_view>

namespace mcp::schema {
namespace {

// ---------------------------------------------------------------------------------------------
// JSON pointers, built in Failure::path as the walk goes down and cut back as it returns.

class Pointer {
public:
    struct Mark {
        size_t length;
        bool cut;
    };

    explicit Pointer(char (&buf)[kMaxPointer]) : m_buf(buf) { reset({ 0, false }); }

    Mark mark() const { return { m_length, m_cut }; }
    void reset(Mark m) {
        m_length = m.length;
        m_cut = m.cut;
        m_buf[m_length] = '\0';
    }

    void push_index(uint32_t index) {
        char digits[10];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + index % 10);
            index /= 10;
        } while (index != 0 && n < 10);
        put('/');
        while (n > 0)
            put(digits[--n]);
    }

    // A reference token (a name, unescaped), with '~' and '/' escaped as RFC 6901 section 3 says.
    void push_token(std::string_view token, bool complete = true) {
        put('/');
        for (char c : token) {
            if (c == '\0') { // cannot live in a C string: stop here and say so
                complete = false;
                break;
            }
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
        if (!complete)
            cut();
    }

    // The key of an object member. Only a pointer's worth of it is needed: unescape() stops
    // before the first code point that does not fit, so the zero-filled buffer then holds a
    // whole-character prefix.
    void push_key(const json::Value& member) {
        char key[kMaxPointer] = {};
        auto n = member.key_into({ key, sizeof key });
        if (n) {
            push_token({ key, *n });
            return;
        }
        size_t length = 0;
        while (length < sizeof key && key[length] != '\0')
            ++length;
        push_token({ key, length }, false);
    }

private:
    void put(char c) {
        if (m_cut)
            return;
        if (m_length + 1 < kMaxPointer) {
            m_buf[m_length++] = c;
            m_buf[m_length] = '\0';
            return;
        }
        cut();
    }

    // Ends the pointer in "...", on a UTF-8 character boundary (the path goes out in JSON text).
    void cut() {
        if (m_cut)
            return;
        size_t at = m_length < kMaxPointer - 4 ? m_length : kMaxPointer - 4;
        while (at > 0 && (static_cast<uint8_t>(m_buf[at]) & 0xc0) == 0x80)
            --at;
        m_buf[at] = m_buf[at + 1] = m_buf[at + 2] = '.';
        m_buf[at + 3] = '\0';
        m_length = at + 3;
        m_cut = true;
    }

    char (&m_buf)[kMaxPointer];
    size_t m_length = 0;
    bool m_cut = false;
};

bool fail(Failure& f, Reason reason, const char* keyword, const char* message) {
    f.reason = reason;
    f.keyword = keyword;
    f.message = message;
    return false;
}

// ---------------------------------------------------------------------------------------------
// Code points of a raw (still escaped) JSON string body, decoded one at a time: strings are
// counted, compared and checked without a buffer of their size. The parser has validated UTF-8,
// escapes and surrogate pairs; anything malformed anyway yields U+FFFD and the walk moves on, so
// a loop over next() always ends.

class CodePoints {
public:
    explicit CodePoints(std::string_view raw) : m_raw(raw) {}

    bool next(uint32_t& cp) {
        if (m_pos >= m_raw.size())
            return false;
        auto lead = static_cast<uint8_t>(m_raw[m_pos]);
        if (lead != '\\')
            return utf8(lead, cp);
        if (m_pos + 1 >= m_raw.size())
            return replacement(cp);
        char e = m_raw[m_pos + 1];
        m_pos += 2;
        switch (e) {
        case 'b': cp = '\b'; return true;
        case 'f': cp = '\f'; return true;
        case 'n': cp = '\n'; return true;
        case 'r': cp = '\r'; return true;
        case 't': cp = '\t'; return true;
        case 'u': return unicode_escape(cp);
        default: cp = static_cast<uint8_t>(e); return true; // '"', '\\', '/'
        }
    }

private:
    bool replacement(uint32_t& cp) {
        m_pos = m_raw.size();
        cp = 0xfffd;
        return true;
    }

    bool utf8(uint8_t lead, uint32_t& cp) {
        size_t n = lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
        if (m_pos + n > m_raw.size())
            return replacement(cp);
        cp = n == 1 ? lead : lead & (0x7fu >> n);
        for (size_t i = 1; i < n; ++i)
            cp = (cp << 6) | (static_cast<uint8_t>(m_raw[m_pos + i]) & 0x3fu);
        m_pos += n;
        return true;
    }

    bool hex4(size_t at, uint32_t& value) const {
        if (at + 4 > m_raw.size())
            return false;
        value = 0;
        for (size_t i = at; i < at + 4; ++i) {
            char c = m_raw[i];
            uint32_t d;
            if (c >= '0' && c <= '9')
                d = static_cast<uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                d = static_cast<uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                d = static_cast<uint32_t>(c - 'A' + 10);
            else
                return false;
            value = value * 16 + d;
        }
        return true;
    }

    // After "\u": four hex digits, and for a high surrogate the "\uXXXX" of its low half.
    bool unicode_escape(uint32_t& cp) {
        if (!hex4(m_pos, cp))
            return replacement(cp);
        m_pos += 4;
        if (cp < 0xd800 || cp > 0xdfff)
            return true;
        uint32_t low = 0;
        if (cp > 0xdbff || m_pos + 6 > m_raw.size() || m_raw[m_pos] != '\\' || m_raw[m_pos + 1] != 'u' ||
            !hex4(m_pos + 2, low) || low < 0xdc00 || low > 0xdfff) {
            cp = 0xfffd;
            return true;
        }
        m_pos += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        return true;
    }

    std::string_view m_raw;
    size_t m_pos = 0;
};

uint64_t code_point_count(const json::Value& s) {
    CodePoints it(s.raw());
    uint64_t n = 0;
    for (uint32_t cp = 0; it.next(cp);)
        ++n;
    return n;
}

bool same_string(const json::Value& a, const json::Value& b) {
    CodePoints x(a.raw()), y(b.raw());
    uint32_t p = 0, q = 0;
    for (;;) {
        bool more_x = x.next(p), more_y = y.next(q);
        if (more_x != more_y)
            return false;
        if (!more_x)
            return true;
        if (p != q)
            return false;
    }
}

bool name_char(uint32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == ':' || c == '-';
}

// format "name" (path == false) and "path", decided on the decoded characters ("\u002e" is '.').
bool good_name(const json::Value& s, bool path) {
    CodePoints it(s.raw());
    bool segment_start = true;
    uint32_t previous = 0;
    for (uint32_t cp = 0; it.next(cp); previous = cp) {
        if (path && cp == '/') {
            if (segment_start)
                return false; // a leading '/' or an empty segment
            segment_start = true;
            continue;
        }
        if (!name_char(cp))
            return false;
        if (cp == '.' && (segment_start || previous == '.'))
            return false; // hidden (or "." / "..") segment, or ".." inside one
        segment_start = false;
    }
    return !segment_start; // empty, or a trailing '/'
}

// ---------------------------------------------------------------------------------------------
// Exact decimal numbers, read from the JSON literal: value = sign × 0.d1d2…dn × 10^point with d1
// and dn non-zero. Ordering and integrality need no floating point and hold at any magnitude.

constexpr int64_t kExponentClamp = 1000000000000000;   // 10^15: larger exponents keep only their sign
constexpr int64_t kSchemaPointLimit = 1000000000;       // schema numbers stay far inside the clamp

struct Decimal {
    bool negative = false;
    bool zero = true;
    bool clamped = false;
    std::string_view mantissa; // integer digits, then optionally '.' and fraction digits
    uint32_t int_digits = 0;
    uint32_t first = 0;        // the first significant digit, counting digits only
    uint32_t count = 0;        // significant digits, first to last non-zero one
    int64_t point = 0;

    char digit(uint32_t k) const { return mantissa[k < int_digits ? k : k + 1]; }
    bool integral() const { return zero || point >= static_cast<int64_t>(count); }
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<Decimal> decimal(const json::Value& v) {
    if (!v.is_number())
        return std::nullopt;
    std::string_view lit = v.raw();
    Decimal d;
    size_t i = 0, n = lit.size();
    if (i < n && lit[i] == '-') {
        d.negative = true;
        ++i;
    }
    size_t start = i;
    while (i < n && is_digit(lit[i]))
        ++i;
    d.int_digits = static_cast<uint32_t>(i - start);
    uint32_t fraction = 0;
    if (i < n && lit[i] == '.') {
        ++i;
        for (; i < n && is_digit(lit[i]); ++i)
            ++fraction;
        if (fraction == 0)
            return std::nullopt;
    }
    if (d.int_digits == 0)
        return std::nullopt;
    d.mantissa = lit.substr(start, i - start);
    int64_t exponent = 0;
    if (i < n && (lit[i] == 'e' || lit[i] == 'E')) {
        ++i;
        bool negative = false;
        if (i < n && (lit[i] == '+' || lit[i] == '-'))
            negative = lit[i++] == '-';
        size_t digits = i;
        for (; i < n && is_digit(lit[i]); ++i)
            if (exponent < kExponentClamp)
                exponent = exponent * 10 + (lit[i] - '0');
        if (i == digits)
            return std::nullopt;
        if (exponent >= kExponentClamp) {
            exponent = kExponentClamp;
            d.clamped = true;
        }
        if (negative)
            exponent = -exponent;
    }
    if (i != n)
        return std::nullopt;
    uint32_t total = d.int_digits + fraction;
    uint32_t first = total, last = 0;
    for (uint32_t k = 0; k < total; ++k) {
        if (d.digit(k) != '0') {
            if (first == total)
                first = k;
            last = k;
        }
    }
    if (first == total) { // zero, whatever its sign or exponent
        d.clamped = false;
        return d;
    }
    d.zero = false;
    d.first = first;
    d.count = last - first + 1;
    d.point = static_cast<int64_t>(d.int_digits) - static_cast<int64_t>(first) + exponent;
    return d;
}

// -1, 0 or 1 as a is below, equal to or above b.
int compare(const Decimal& a, const Decimal& b) {
    int sa = a.zero ? 0 : a.negative ? -1 : 1;
    int sb = b.zero ? 0 : b.negative ? -1 : 1;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (sa == 0)
        return 0;
    int magnitude = 0;
    if (a.point != b.point) {
        magnitude = a.point < b.point ? -1 : 1;
    } else {
        uint32_t n = a.count > b.count ? a.count : b.count;
        for (uint32_t k = 0; k < n && magnitude == 0; ++k) {
            char x = k < a.count ? a.digit(a.first + k) : '0';
            char y = k < b.count ? b.digit(b.first + k) : '0';
            magnitude = x < y ? -1 : x > y ? 1 : 0;
        }
    }
    return sa * magnitude;
}

// A number a schema may use as a bound or an enum member: exactly comparable with any instance.
bool schema_number(const json::Value& v) {
    auto d = decimal(v);
    return d && !d->clamped && d->point <= kSchemaPointLimit && d->point >= -kSchemaPointLimit;
}

bool same_value(const json::Value& a, const json::Value& b) {
    if (a.type() != b.type())
        return false;
    switch (a.type()) {
    case json::Type::Null: return true;
    case json::Type::Bool: return a.as_bool() == b.as_bool();
    case json::Type::String: return same_string(a, b);
    case json::Type::Number: {
        auto x = decimal(a), y = decimal(b);
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
        auto d = decimal(v);
        return d && d->integral() ? (kNumber | kInteger) : kNumber;
    }
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The schema pass: keywords and their values' shapes; bounds for check_bounded.

enum class Shape : uint8_t { Any, Type, Enum, Names, Schemas, BoolOrSchema, Schema, Count, Number, Format };

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
};

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
    case Shape::Number: return schema_number(v);
    case Shape::Format: return v.string_equals("name") || v.string_equals("path");
    case Shape::Enum:
        if (!v.is_array())
            return false;
        for (json::Value e = v.first(); e.valid(); e = e.next_sibling())
            if (e.is_array() || e.is_object() || (e.is_number() && !schema_number(e)))
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
        for (const Keyword& k : kKeywords)
            if (m.key_equals(k.name))
                known = &k;
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
    SchemaWalker(Failure& f, Pointer& at, int max_depth, bool bounded)
        : m_f(f), m_at(at), m_max_depth(max_depth), m_bounded(bounded) {}

    bool walk(const json::Value& s, int depth) {
        if (depth > m_max_depth)
            return fail(m_f, Reason::SchemaUnsupported, "", "schema nested too deeply");
        if (!s.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "", "schema is not an object");
        if (!keywords_ok(s, m_f, m_at) || (m_bounded && !bounds_ok(s, m_f)))
            return false;
        json::Value props = s.find("properties");
        for (json::Value p = props.first(); p.valid(); p = p.next_sibling())
            if (!below(p, "properties", &p, depth))
                return false;
        json::Value extra = s.find("additionalProperties");
        if (extra.is_object() && !below(extra, "additionalProperties", nullptr, depth))
            return false;
        json::Value items = s.find("items");
        return !items.valid() || below(items, "items", nullptr, depth);
    }

private:
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
        uint64_t length = code_point_count(v);
        if (min.valid() && length < min.as_uint64().value_or(0))
            return fail(f, Reason::TooShort, "minLength", "string shorter than minLength");
        if (max.valid() && length > max.as_uint64().value_or(0))
            return fail(f, Reason::TooLong, "maxLength", "string longer than maxLength");
    }
    if (json::Value format = s.find("format"); format.valid() && !good_name(v, format.string_equals("path")))
        return fail(f, Reason::BadName, "format", "not a valid name or path");
    return true;
}

bool check_number(const json::Value& s, const json::Value& v, Failure& f) {
    // The value must lie on the `side` of the bound (+1 above, -1 below), or on it unless strict.
    static constexpr struct {
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
    auto value = decimal(v);
    if (!value)
        return fail(f, Reason::Type, "type", "unreadable number");
    for (const auto& b : kBounds) {
        json::Value bound = s.find(b.keyword);
        if (!bound.valid())
            continue;
        auto limit = decimal(bound);
        if (!limit)
            return fail(f, Reason::SchemaUnsupported, b.keyword, "unsupported value for this keyword");
        int side = compare(*value, *limit) * b.side;
        if (side < 0 || (side == 0 && b.strict))
            return fail(f, b.reason, b.keyword, b.message);
    }
    return true;
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
    InstanceWalker(Failure& f, Pointer& at) : m_f(f), m_at(at) {}

    bool check(const json::Value& s, const json::Value& v, int depth) {
        if (depth > kMaxSchemaDepth || !s.is_object())
            return fail(m_f, Reason::SchemaUnsupported, "", "schema nested too deeply");
        if (!v.valid())
            return fail(m_f, Reason::Type, "type", "no value");
        if (!(instance_types(v) & allowed_types(s)))
            return fail(m_f, Reason::Type, "type", "value of the wrong type");
        if (json::Value e = s.find("enum"); e.valid() && !in_enum(e, v))
            return fail(m_f, Reason::NotInEnum, "enum", "value not in enum");
        switch (v.type()) {
        case json::Type::String: return check_string(s, v, m_f);
        case json::Type::Number: return check_number(s, v, m_f);
        case json::Type::Array: return check_array(s, v, depth);
        case json::Type::Object: return check_object(s, v, depth);
        default: return true;
        }
    }

private:
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
    }
    return "unknown";
}

bool validate(const json::Value& schema, const json::Value& instance, Failure& out) {
    out = Failure {};
    Pointer at(out.path);
    if (!SchemaWalker(out, at, kMaxSchemaDepth, false).walk(schema, 1))
        return false;
    at.reset({ 0, false });
    return InstanceWalker(out, at).check(schema, instance, 1);
}

bool check_bounded(const json::Value& schema, Failure& out) {
    out = Failure {};
    Pointer at(out.path);
    return SchemaWalker(out, at, kMaxBoundedDepth, true).walk(schema, 1);
}

} // namespace mcp::schema

// JSON Schema subset for tools/call arguments (mcp/schema/validator.h): every keyword accepts and
// refuses with the exact reason, keyword and JSON pointer; numbers compare exactly; strings are
// measured in code points and compared unescaped; anything unsupported fails closed; recursion
// is bounded by the schema; check_bounded() names each missing bound.
#include <json/json.h>
#include <mcp/schema/compiled.h>
#include <mcp/schema/validator.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using mcp::schema::Failure;
using mcp::schema::reason_name;

struct Doc {
    std::string text;
    std::vector<json::Node> nodes = std::vector<json::Node>(4096);
    json::Document doc;
    explicit Doc(std::string t) : text(std::move(t)) {
        auto d = json::Document::parse(text, nodes);
        EXPECT_TRUE(d.ok()) << "test input is not JSON: " << text;
        if (d.ok())
            doc = *d;
    }
    json::Value root() const { return doc.root(); }
};

struct Outcome {
    bool ok = false;
    Failure failure;
};

// Every case also goes through the schema's compiled form (compiled.h), which must give the
// same outcome and failure, byte for byte, as validate() on the text.
void expect_compiled_same(const std::string& schema, const Doc& s, const Doc& i, const Outcome& o) {
    if (s.doc.node_count() > mcp::schema::kMaxSchemaNodes)
        return; // the compiled form refuses it as unreadable (the pipeline's own limit)
    std::vector<json::Node> pool(mcp::schema::kMaxSchemaNodes);
    mcp::schema::Compiled c;
    ASSERT_TRUE(c.compile(s.text.c_str(), pool));
    Failure f;
    EXPECT_EQ(c.validate(i.root(), f), o.ok) << schema;
    EXPECT_EQ(f.reason, o.failure.reason) << schema;
    EXPECT_STREQ(f.keyword, o.failure.keyword) << schema;
    EXPECT_STREQ(f.message, o.failure.message) << schema;
    EXPECT_STREQ(f.path, o.failure.path) << schema;
}

Outcome check(const std::string& schema, const std::string& instance) {
    Doc s(schema), i(instance);
    Outcome o;
    o.ok = mcp::schema::validate(s.root(), i.root(), o.failure);
    expect_compiled_same(schema, s, i, o);
    return o;
}

Outcome bounded(const std::string& schema) {
    Doc s(schema);
    Outcome o;
    o.ok = mcp::schema::check_bounded(s.root(), o.failure);
    return o;
}

// Accepted, with the failure left empty.
testing::AssertionResult Valid(const std::string& schema, const std::string& instance) {
    Outcome o = check(schema, instance);
    if (o.ok && o.failure.reason == mcp::schema::Reason::None && o.failure.path[0] == '\0')
        return testing::AssertionSuccess();
    return testing::AssertionFailure() << schema << " / " << instance << ": " << (o.ok ? "accepted but " : "")
                                       << reason_name(o.failure.reason) << " (" << o.failure.keyword << ") at '"
                                       << o.failure.path << "'";
}

// Refused with exactly this reason, keyword and pointer, and a message.
testing::AssertionResult Invalid(const std::string& schema, const std::string& instance, const char* reason,
                                 const char* keyword, const char* path) {
    Outcome o = check(schema, instance);
    const Failure& f = o.failure;
    if (!o.ok && strcmp(reason_name(f.reason), reason) == 0 && strcmp(f.keyword, keyword) == 0 &&
        strcmp(f.path, path) == 0 && f.message[0] != '\0')
        return testing::AssertionSuccess();
    return testing::AssertionFailure() << schema << " / " << instance << ": " << (o.ok ? "accepted" : "refused")
                                       << " with " << reason_name(f.reason) << " (" << f.keyword << ") at '" << f.path
                                       << "', expected " << reason << " (" << keyword << ") at '" << path << "'";
}

#define EXPECT_VALID(schema, instance) EXPECT_TRUE(Valid(schema, instance))
#define EXPECT_INVALID(schema, instance, reason, keyword, path) \
    EXPECT_TRUE(Invalid(schema, instance, reason, keyword, path))
// Refused as a schema we do not enforce, whatever the instance.
#define EXPECT_UNSUPPORTED(schema, instance, keyword, path) \
    EXPECT_INVALID(schema, instance, "schema_unsupported", keyword, path)

bool valid_utf8(const char* s) {
    for (size_t i = 0; s[i];) {
        auto b = static_cast<unsigned char>(s[i]);
        size_t n = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0)
            return false;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
                return false;
        i += n;
    }
    return true;
}

std::string nested_arrays(int levels) { // `levels` schemas, each an array of the next
    std::string s;
    for (int i = 1; i < levels; ++i)
        s += R"({"type":"array","maxItems":1,"items":)";
    s += R"({"type":"integer","minimum":0,"maximum":1})";
    for (int i = 1; i < levels; ++i)
        s += "}";
    return s;
}

std::string nested_instance(int levels) { return std::string(levels - 1, '[') + "1" + std::string(levels - 1, ']'); }

} // namespace

TEST(Schema, ReasonNamesAreStable) {
    using R = mcp::schema::Reason;
    const std::pair<R, const char*> names[] = {
        { R::None, "none" },
        { R::Type, "type" },
        { R::Required, "required" },
        { R::AdditionalProperty, "additional_property" },
        { R::TooShort, "too_short" },
        { R::TooLong, "too_long" },
        { R::BelowMinimum, "below_minimum" },
        { R::AboveMaximum, "above_maximum" },
        { R::NotInEnum, "not_in_enum" },
        { R::TooFewItems, "too_few_items" },
        { R::TooManyItems, "too_many_items" },
        { R::BadName, "bad_name" },
        { R::Unbounded, "unbounded" },
        { R::SchemaUnsupported, "schema_unsupported" },
        { R::NoAlternative, "no_alternative" },
    };
    for (const auto& [reason, name] : names)
        EXPECT_STREQ(reason_name(reason), name);
}

TEST(Schema, TypeNames) {
    EXPECT_VALID(R"({"type":"string"})", R"("x")");
    EXPECT_INVALID(R"({"type":"string"})", "1", "type", "type", "");
    EXPECT_VALID(R"({"type":"boolean"})", "false");
    EXPECT_INVALID(R"({"type":"boolean"})", "0", "type", "type", "");
    EXPECT_VALID(R"({"type":"null"})", "null");
    EXPECT_INVALID(R"({"type":"null"})", R"("")", "type", "type", "");
    EXPECT_VALID(R"({"type":"object"})", "{}");
    EXPECT_INVALID(R"({"type":"object"})", "[]", "type", "type", "");
    EXPECT_VALID(R"({"type":"array"})", "[]");
    EXPECT_INVALID(R"({"type":"array"})", "{}", "type", "type", "");
    EXPECT_VALID(R"({"type":"number"})", "4.5");
    EXPECT_VALID(R"({"type":"number"})", "4");
    EXPECT_INVALID(R"({"type":"number"})", R"("4")", "type", "type", "");
    // An array of names allows any of them.
    EXPECT_VALID(R"({"type":["string","null"]})", "null");
    EXPECT_VALID(R"({"type":["string","null"]})", R"("s")");
    EXPECT_INVALID(R"({"type":["string","null"]})", "true", "type", "type", "");
    EXPECT_VALID(R"({"type":["integer","boolean"]})", "true");
    EXPECT_INVALID(R"({"type":["integer","boolean"]})", "0.5", "type", "type", "");
    // No type: anything goes.
    EXPECT_VALID("{}", R"({"a":[1,"x",null]})");
}

TEST(Schema, IntegerMeansNoFractionDecidedOnTheLiteral) {
    const std::string integer = R"({"type":"integer"})";
    for (const char* yes : { "0", "-0", "42", "-7", "42.0", "1.50e1", "1e3", "0.0", "-0.0e-5", "1E+2", "1e19",
                             "-99223372036854775807320732236854775807", "1e400", "1.5e400" })
        EXPECT_VALID(integer, yes);
    for (const char* no : { "4.5", "-0.1", "1e-300", "0.55e1", "123456789.000000001",
                            // A double would round these to integers; the literal says otherwise.
                            "9007199254740993.5", "1e-400" })
        EXPECT_INVALID(integer, no, "type", "type", "");
    EXPECT_VALID(R"({"type":"number"})", "9007199254740993.5");
}

TEST(Schema, RequiredAndAdditionalProperties) {
    const std::string s = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},)"
                          R"("required":["a"],"additionalProperties":false})";
    EXPECT_VALID(s, R"({"a":1})");
    EXPECT_VALID(s, R"({"a":1,"b":"x"})");
    EXPECT_INVALID(s, R"({"b":"x"})", "required", "required", "/a");
    EXPECT_INVALID(s, R"({})", "required", "required", "/a");
    EXPECT_INVALID(s, R"({"a":1,"c":2})", "additional_property", "additionalProperties", "/c");
    EXPECT_INVALID(s, R"({"a":"1"})", "type", "type", "/a");
    EXPECT_INVALID(s, R"({"a":1,"b":2})", "type", "type", "/b");
    // Missing names are escaped in the pointer (RFC 6901).
    EXPECT_INVALID(R"({"required":["x/y~z"]})", "{}", "required", "required", "/x~1y~0z");
    // required only looks at objects.
    EXPECT_VALID(R"({"required":["a"]})", "3");

    // additionalProperties true, or absent: unlisted members are fine.
    EXPECT_VALID(R"({"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":true})",
                 R"({"a":1,"z":[]})");
    EXPECT_VALID(R"({"type":"object","properties":{"a":{"type":"integer"}}})", R"({"a":1,"z":[]})");
    // As a schema it applies to the unlisted members only.
    const std::string t = R"({"type":"object","properties":{"a":{"type":"string"}},)"
                          R"("additionalProperties":{"type":"integer","maximum":5}})";
    EXPECT_VALID(t, R"({"a":"x","n":3})");
    EXPECT_INVALID(t, R"({"a":"x","n":9})", "above_maximum", "maximum", "/n");
    EXPECT_INVALID(t, R"({"a":7})", "type", "type", "/a");
    EXPECT_INVALID(R"({"type":"object","additionalProperties":false})", R"({"a/b~c":1})", "additional_property",
                   "additionalProperties", "/a~1b~0c");
}

TEST(Schema, KeysAreComparedUnescaped) {
    // Escapes on either side: the schema's, the instance's, or both.
    EXPECT_VALID(R"({"type":"object","properties":{"é":{"type":"integer"}},"additionalProperties":false})",
                 R"({"\u00e9":1})");
    EXPECT_VALID(R"({"type":"object","properties":{"\u00e9":{"type":"integer"}},"additionalProperties":false})",
                 R"({"é":1})");
    EXPECT_VALID(R"({"type":"object","properties":{"\u0061b":{"type":"integer"}},"additionalProperties":false})",
                 R"({"a\u0062":1})");
    EXPECT_INVALID(R"({"type":"object","properties":{"\u0061":{"type":"integer"}}})", R"({"\u0061":"x"})", "type",
                   "type", "/a");
    EXPECT_VALID(R"({"required":["\u00e9"]})", R"({"é":null})");
    EXPECT_INVALID(R"({"required":["\u00e9"]})", R"({"e":null})", "required", "required", "/é");
    // Names up to kMaxPropertyName bytes, matched whatever the instance key's length.
    std::string name(mcp::schema::kMaxPropertyName, 'n');
    const std::string s = R"({"type":"object","properties":{")" + name +
                          R"(":{"type":"integer"}},"additionalProperties":false})";
    EXPECT_VALID(s, "{\"" + name + "\":1}");
    Outcome longer = check(s, "{\"" + name + "n\":1}");
    EXPECT_FALSE(longer.ok);
    EXPECT_STREQ(reason_name(longer.failure.reason), "additional_property");
}

TEST(Schema, StringLengthsCountCodePoints) {
    const std::string s = R"({"type":"string","minLength":2,"maxLength":3})";
    EXPECT_VALID(s, R"("ab")");
    EXPECT_VALID(s, R"("abc")");
    EXPECT_INVALID(s, R"("abcd")", "too_long", "maxLength", "");
    EXPECT_INVALID(s, R"("a")", "too_short", "minLength", "");
    EXPECT_INVALID(s, R"("")", "too_short", "minLength", "");
    EXPECT_VALID(s, R"("ééé")") << "three code points in six bytes";
    EXPECT_INVALID(s, R"("éééé")", "too_long", "maxLength", "");
    EXPECT_VALID(s, R"("\u00e9\u00e9\u00e9")") << "an escape counts as the character it stands for";
    EXPECT_VALID(s, R"("日本語")");
    EXPECT_VALID(s, R"("😀😀")") << "four-byte characters";
    EXPECT_VALID(s, R"("\ud83d\ude00\ud83d\ude00")") << "a surrogate pair is one code point";
    EXPECT_INVALID(s, R"("\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00")", "too_long", "maxLength", "");
    EXPECT_INVALID(s, R"("\u00e9")", "too_short", "minLength", "");
    EXPECT_VALID(s, R"("\n\t")");
    EXPECT_INVALID(s, R"("\n\t\"\\")", "too_long", "maxLength", "");
    EXPECT_VALID(R"({"type":"string","maxLength":0})", R"("")");
    EXPECT_INVALID(R"({"type":"string","maxLength":0})", R"("\/")", "too_long", "maxLength", "");
    // Length keywords apply to strings only.
    EXPECT_VALID(R"({"maxLength":1})", "12345");
}

TEST(Schema, NumberBoundsAreExact) {
    const std::string s = R"({"type":"number","minimum":-1.5,"maximum":10})";
    EXPECT_VALID(s, "-1.5");
    EXPECT_VALID(s, "-1.50");
    EXPECT_VALID(s, "10");
    EXPECT_VALID(s, "1e1");
    EXPECT_VALID(s, "0");
    EXPECT_INVALID(s, "10.0001", "above_maximum", "maximum", "");
    EXPECT_INVALID(s, "10.000000000000000000000000000001", "above_maximum", "maximum", "");
    EXPECT_INVALID(s, "-2", "below_minimum", "minimum", "");
    EXPECT_INVALID(s, "-1.5000000000000000000001", "below_minimum", "minimum", "");
    EXPECT_INVALID(s, "1e400", "above_maximum", "maximum", "") << "beyond any double";
    EXPECT_INVALID(s, "-1e400", "below_minimum", "minimum", "");
    EXPECT_VALID(s, "1e-400");
    EXPECT_INVALID(s, "1e99999999999999999999", "above_maximum", "maximum", "") << "beyond any exponent we keep";
    EXPECT_VALID(s, "1e-99999999999999999999");

    const std::string e = R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":100})";
    EXPECT_INVALID(e, "0", "below_minimum", "exclusiveMinimum", "");
    EXPECT_INVALID(e, "-0", "below_minimum", "exclusiveMinimum", "");
    EXPECT_INVALID(e, "100", "above_maximum", "exclusiveMaximum", "");
    EXPECT_INVALID(e, "1e2", "above_maximum", "exclusiveMaximum", "");
    EXPECT_VALID(e, "1");
    EXPECT_VALID(e, "99");
    EXPECT_VALID(R"({"exclusiveMinimum":0.1})", "0.1000000000000000000001");
    EXPECT_INVALID(R"({"exclusiveMinimum":0.1})", "0.1", "below_minimum", "exclusiveMinimum", "");
    EXPECT_INVALID(R"({"exclusiveMaximum":-0.5})", "-0.5", "above_maximum", "exclusiveMaximum", "");
    EXPECT_VALID(R"({"exclusiveMaximum":-0.5})", "-0.50001");

    // Integers beyond 2^53 keep their last digit (a double would round 2^53 + 1 down to 2^53).
    EXPECT_INVALID(R"({"type":"integer","maximum":9007199254740992})", "9007199254740993", "above_maximum", "maximum",
                   "");
    EXPECT_INVALID(R"({"type":"number","maximum":9007199254740992})", "9007199254740992.5", "above_maximum", "maximum",
                   "");
    EXPECT_INVALID(R"({"type":"integer","minimum":-9223372036854775808})", "-9223372036854775809", "below_minimum",
                   "minimum", "");
    EXPECT_VALID(R"({"minimum":0.1,"maximum":0.1})", "1e-1");
    // Bounds apply to numbers only.
    EXPECT_VALID(R"({"maximum":1})", R"("9")");
}

TEST(Schema, EnumsCompareValues) {
    const std::string s = R"({"enum":["a","b\u00e9","x\"y",1,0.25,-0,true,null]})";
    EXPECT_VALID(s, R"("a")");
    EXPECT_VALID(s, R"("bé")");
    EXPECT_VALID(s, R"("b\u00e9")");
    EXPECT_VALID(s, R"("\u0062\u00E9")");
    EXPECT_VALID(s, R"("x\"y")");
    EXPECT_VALID(s, R"("x\u0022y")");
    EXPECT_VALID(s, "1");
    EXPECT_VALID(s, "1.0");
    EXPECT_VALID(s, "10e-1");
    EXPECT_VALID(s, "0.1e1");
    EXPECT_VALID(s, "2.5e-1");
    EXPECT_VALID(s, "0");
    EXPECT_VALID(s, "0.0");
    EXPECT_VALID(s, "true");
    EXPECT_VALID(s, "null");
    EXPECT_INVALID(s, R"("c")", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, R"("b")", "not_in_enum", "enum", "") << "a prefix is not a match";
    EXPECT_INVALID(s, R"("bée")", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, R"("A")", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, "false", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, "2", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, "1.0000000000000000000001", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, R"("1")", "not_in_enum", "enum", "") << "no coercion between types";
    EXPECT_INVALID(s, R"("null")", "not_in_enum", "enum", "");
    EXPECT_INVALID(s, "[]", "not_in_enum", "enum", "");
    EXPECT_INVALID(R"({"type":"object","properties":{"level":{"enum":["info","error"]}}})", R"({"level":"debug"})",
                   "not_in_enum", "enum", "/level");
    // Characters outside the BMP, written as UTF-8 or as a surrogate pair, on either side.
    const std::string emoji = R"({"enum":["😀","\ud83d\ude01x"]})";
    EXPECT_VALID(emoji, R"("\ud83d\ude00")");
    EXPECT_VALID(emoji, R"("😁x")");
    EXPECT_INVALID(emoji, R"("\ud83d\ude01")", "not_in_enum", "enum", "");
    EXPECT_INVALID(emoji, R"("\ud83d\ude02x")", "not_in_enum", "enum", "");
    EXPECT_INVALID(emoji, R"("\ud83c\ude00")", "not_in_enum", "enum", "");
    // Every escape decodes to its character.
    const std::string escapes = R"({"enum":["a\nb","c/d","\b\f\r\t\\"]})";
    EXPECT_VALID(escapes, R"("a\u000ab")");
    EXPECT_VALID(escapes, R"("c\/d")");
    EXPECT_VALID(escapes, R"("\u0008\u000c\u000d\u0009\u005c")");
    EXPECT_INVALID(escapes, R"("anb")", "not_in_enum", "enum", "");
    EXPECT_INVALID(escapes, R"("a\u000db")", "not_in_enum", "enum", "");
    // type is checked before enum.
    EXPECT_INVALID(R"({"type":"string","enum":["a"]})", "1", "type", "type", "");
}

TEST(Schema, ArraysAndNestedPaths) {
    const std::string s = R"({"type":"object","properties":{"a":{"type":"array","minItems":1,"maxItems":3,"items":)"
                          R"({"type":"object","properties":{"b":{"type":"string","maxLength":4}},)"
                          R"("additionalProperties":false}}}})";
    EXPECT_VALID(s, R"({"a":[{"b":"ab"}]})");
    EXPECT_VALID(s, R"({"a":[{},{},{"b":"abcd"}]})");
    EXPECT_INVALID(s, R"({"a":[]})", "too_few_items", "minItems", "/a");
    EXPECT_INVALID(s, R"({"a":[{},{},{},{}]})", "too_many_items", "maxItems", "/a");
    EXPECT_INVALID(s, R"({"a":[{"b":"ok"},{"b":"ok"},{"b":"toolong"}]})", "too_long", "maxLength", "/a/2/b");
    EXPECT_INVALID(s, R"({"a":[{"b":"ok","x":1}]})", "additional_property", "additionalProperties", "/a/0/x");
    EXPECT_INVALID(s, R"({"a":[{},7]})", "type", "type", "/a/1");
    EXPECT_INVALID(s, R"({"a":{}})", "type", "type", "/a");
    // Indices past 9 and arrays of arrays.
    std::string many = "[";
    for (int i = 0; i < 12; ++i)
        many += "[1,2],";
    many += "[1,\"x\"]]";
    EXPECT_INVALID(R"({"items":{"items":{"type":"integer"}}})", many, "type", "type", "/12/1");
    // Without items, elements are not checked; items applies to every element.
    EXPECT_VALID(R"({"type":"array","maxItems":2})", R"([{},"x"])");
    EXPECT_VALID(R"({"type":"array","items":{"type":"integer"}})", "[]");
    EXPECT_VALID(R"({"minItems":5})", R"("short")") << "item counts apply to arrays only";
}

// Arrays whose items only type and bound numbers are checked with the items' keywords read once
// (validator.cpp, NumberRule): every element must get exactly what the full walk gives it, which
// an items schema with one more (empty) applicator still takes.
TEST(Schema, NumberArraysReadTheirItemsOnce) {
    const char* items[] = {
        R"({"type":"number","minimum":-1,"maximum":1})",
        R"({"type":"integer","minimum":0,"maximum":9007199254740991})",
        R"({"type":"number","exclusiveMinimum":0,"exclusiveMaximum":2.5,"description":"d","title":"t"})",
        R"({"type":["integer","number"],"minimum":-3.4e38,"maximum":3.4e38})",
        R"({"type":"number","minimum":"x","maximum":1})",
        R"({"type":"number"})",
    };
    const char* instances[] = {
        "[]",
        "[0]",
        "[-1,1,0.5]",
        "[1.0000001]",
        "[-1.5]",
        "[0,1,2,3,4,5,6,7,8,9,10,11,-2]",
        "[2.5]",
        "[2.4999]",
        "[1e-300]",
        "[-0]",
        "[1,\"x\"]",
        "[1,null]",
        "[[1]]",
        "[{}]",
        "[true]",
        "[1.5]",
        "[3.5e38]",
        "[4.0e0]",
        "[9007199254740992]",
        "[12345678901234567890123456789e-28]",
    };
    int refused = 0;
    for (const char* it : items) {
        const std::string fast = std::string(R"({"type":"array","items":)") + it + "}";
        std::string slow(it);
        slow.insert(slow.size() - 1, R"(,"allOf":[{}])");
        slow = std::string(R"({"type":"array","items":)") + slow + "}";
        for (const char* instance : instances) {
            Outcome a = check(fast, instance), b = check(slow, instance);
            EXPECT_EQ(a.ok, b.ok) << fast << " / " << instance;
            EXPECT_STREQ(reason_name(a.failure.reason), reason_name(b.failure.reason)) << fast << " / " << instance;
            EXPECT_STREQ(a.failure.keyword, b.failure.keyword) << fast << " / " << instance;
            EXPECT_STREQ(a.failure.message, b.failure.message) << fast << " / " << instance;
            EXPECT_STREQ(a.failure.path, b.failure.path) << fast << " / " << instance;
            refused += !a.ok;
        }
    }
    EXPECT_GT(refused, 40) << "the cases refuse as well as accept";
    EXPECT_INVALID(R"({"items":{"type":"number","maximum":1}})", "[0,1,0.5,1.5]", "above_maximum", "maximum", "/3");
    EXPECT_INVALID(R"({"items":{"type":"integer","minimum":0,"maximum":9}})", "[1,2.5]", "type", "type", "/1");
}

TEST(Schema, NamesAndPathsNeverClimb) {
    const std::string name = R"({"type":"string","maxLength":64,"format":"name"})";
    const std::string path = R"({"type":"string","maxLength":64,"format":"path"})";
    for (const char* good :
         { R"("docs")", R"("my-collection_1.v2")", R"("a:b")", R"("A.b.c")", R"("a.")", R"("\u0064ocs")" })
        EXPECT_VALID(name, good);
    for (const char* bad :
         { R"("..")", R"(".")", R"("a..b")", R"(".hidden")", R"("a/b")", R"("")", R"("sp ace")", R"("\u002e\u002e")",
           R"("a\u002e.b")", R"("a\\b")", R"("é")", R"("tab\t")", R"("semi;colon")" })
        EXPECT_INVALID(name, bad, "bad_name", "format", "");
    for (const char* good : { R"("a/b/c.txt")", R"("a")", R"("x:y/z-1/_w")", R"("a\/b")" })
        EXPECT_VALID(path, good);
    for (const char* bad :
         { R"("../etc")", R"("a/../b")", R"("a/..")", R"("/abs")", R"("a//b")", R"("a/")", R"("a/.git")", R"("./a")",
           R"("a/./b")", R"("a/b..c")", R"("")", R"("/")", R"("a\\b")", R"("a\u002f\u002e\u002e")" })
        EXPECT_INVALID(path, bad, "bad_name", "format", "");
    // format applies to strings only; length is checked first.
    EXPECT_VALID(R"({"format":"name"})", "12");
    EXPECT_INVALID(R"({"type":"string","maxLength":2,"format":"name"})", R"("...")", "too_long", "maxLength", "");
    EXPECT_INVALID(R"({"type":"object","properties":{"p":{"type":"string","format":"path"}}})", R"({"p":"a/../b"})",
                   "bad_name", "format", "/p");
}

TEST(Schema, AnnotationsAreIgnored) {
    EXPECT_VALID(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string","title":"T",)"
                 R"("description":"D","default":"x","examples":["y"]})",
                 R"("a")");
    // Annotations hold any value, and a property may be called like a keyword.
    EXPECT_VALID(R"({"type":"object","default":{"pattern":1},"properties":{"pattern":{"type":"integer"},)"
                 R"("$ref":{"type":"string"}}})",
                 R"({"pattern":1,"$ref":"x"})");
}

TEST(Schema, UnsupportedKeywordsFailClosed) {
    // Keywords we do not enforce, wherever they are: the pointer names the keyword in the schema.
    EXPECT_UNSUPPORTED(R"({"type":"string","pattern":"^a"})", R"("a")", "", "/pattern");
    EXPECT_UNSUPPORTED(R"({"patternProperties":{"a":{"type":"string"}}})", R"("a")", "", "/patternProperties");
    EXPECT_UNSUPPORTED(R"({"$id":"x"})", R"("a")", "", "/$id");
    EXPECT_UNSUPPORTED(R"({"dependentRequired":{"a":["b"]}})", "1", "", "/dependentRequired");
    EXPECT_UNSUPPORTED(R"({"type":"object","properties":{"x":{"type":"string","pattern":"a"}}})", R"({"x":"a"})", "",
                       "/properties/x/pattern");
    // ...even in a branch this instance never reaches.
    EXPECT_UNSUPPORTED(R"({"type":"object","properties":{"x":{"minContains":1}}})", "{}", "",
                       "/properties/x/minContains");
    EXPECT_UNSUPPORTED(R"({"items":{"uniqueItems":true}})", "[]", "", "/items/uniqueItems");
    EXPECT_UNSUPPORTED(R"({"additionalProperties":{"contains":{}}})", "{}", "", "/additionalProperties/contains");
    // ...and inside the applicators' subschemas.
    EXPECT_UNSUPPORTED(R"({"anyOf":[{"type":"string"},{"pattern":"a"}]})", R"("a")", "", "/anyOf/1/pattern");
    EXPECT_UNSUPPORTED(R"({"if":{"type":"string"},"then":{"format":"email"}})", R"("a")", "format", "/then");
    // Unknown keys are named as written, escaped for the pointer.
    EXPECT_UNSUPPORTED(R"({"a/b":1})", "1", "", "/a~1b");

    // Known keywords with values of a shape we do not enforce.
    EXPECT_UNSUPPORTED(R"({"type":"strang"})", R"("a")", "type", "");
    EXPECT_UNSUPPORTED(R"({"type":[]})", R"("a")", "type", "");
    EXPECT_UNSUPPORTED(R"({"type":["string",1]})", R"("a")", "type", "");
    EXPECT_UNSUPPORTED(R"({"type":"String"})", R"("a")", "type", "");
    EXPECT_UNSUPPORTED(R"({"maxLength":"3"})", R"("a")", "maxLength", "");
    EXPECT_UNSUPPORTED(R"({"maxLength":-1})", R"("a")", "maxLength", "");
    EXPECT_UNSUPPORTED(R"({"minItems":1.5})", "[]", "minItems", "");
    EXPECT_UNSUPPORTED(R"({"minimum":"0"})", "1", "minimum", "");
    EXPECT_UNSUPPORTED(R"({"maximum":1e99999999999})", "1", "maximum", "") << "a bound we cannot compare exactly";
    EXPECT_UNSUPPORTED(R"({"minimum":0,"exclusiveMinimum":true})", "1", "exclusiveMinimum", "") << "draft 4";
    EXPECT_UNSUPPORTED(R"({"items":[{"type":"string"}]})", "[]", "items", "") << "tuple form";
    EXPECT_UNSUPPORTED(R"({"items":true})", "[]", "items", "");
    EXPECT_UNSUPPORTED(R"({"$ref":"#/x"})", R"("a")", "$ref", "") << "only #/$defs/NAME";
    EXPECT_UNSUPPORTED(R"({"$ref":"https://example.com/s"})", R"("a")", "$ref", "") << "no remote references";
    EXPECT_UNSUPPORTED(R"({"$defs":[]})", R"("a")", "$defs", "");
    EXPECT_UNSUPPORTED(R"({"enum":"a"})", R"("a")", "enum", "");
    EXPECT_UNSUPPORTED(R"({"enum":[{"a":1}]})", R"("a")", "enum", "");
    EXPECT_UNSUPPORTED(R"({"enum":[[1]]})", "1", "enum", "");
    EXPECT_UNSUPPORTED(R"({"format":"email"})", R"("a@b")", "format", "");
    EXPECT_UNSUPPORTED(R"({"format":1})", R"("a")", "format", "");
    EXPECT_UNSUPPORTED(R"({"additionalProperties":"no"})", "{}", "additionalProperties", "");
    EXPECT_UNSUPPORTED(R"({"required":"a"})", "{}", "required", "");
    EXPECT_UNSUPPORTED(R"({"required":[1]})", "{}", "required", "");
    EXPECT_UNSUPPORTED(R"({"properties":[]})", "{}", "properties", "");
    EXPECT_UNSUPPORTED(R"({"properties":{"a":true}})", "{}", "properties", "") << "boolean schemas";
    std::string long_name(mcp::schema::kMaxPropertyName + 1, 'n');
    EXPECT_UNSUPPORTED(R"({"properties":{")" + long_name + R"(":{}}})", "{}", "properties", "");
    EXPECT_UNSUPPORTED(R"({"required":[")" + long_name + R"("]})", "{}", "required", "");
    // A schema that is not an object.
    EXPECT_UNSUPPORTED("true", "1", "", "");
    EXPECT_UNSUPPORTED("[]", "1", "", "");
    // The nested schema's place is reported.
    EXPECT_UNSUPPORTED(R"({"type":"object","properties":{"a":{"type":"array","items":{"maxItems":"2"}}}})",
                       R"({"a":[]})", "maxItems", "/properties/a/items");
}

TEST(Schema, DepthIsBoundedByTheSchema) {
    const int limit = mcp::schema::kMaxSchemaDepth;
    EXPECT_VALID(nested_arrays(limit), nested_instance(limit));
    EXPECT_INVALID(nested_arrays(limit), nested_instance(limit - 1), "type", "type", "/0/0/0/0/0/0/0/0/0/0/0/0/0/0");
    // One level more is refused, whatever the instance (even one that would not reach it).
    Outcome deep = check(nested_arrays(limit + 1), nested_instance(limit + 1));
    EXPECT_FALSE(deep.ok);
    EXPECT_STREQ(reason_name(deep.failure.reason), "schema_unsupported");
    Outcome shallow = check(nested_arrays(limit + 1), "[]");
    EXPECT_FALSE(shallow.ok);
    EXPECT_STREQ(reason_name(shallow.failure.reason), "schema_unsupported");
    // A deep instance is only followed as far as the schema goes.
    EXPECT_VALID(R"({"type":"array"})", std::string(30, '[') + std::string(30, ']'));
}

TEST(Schema, LongPathsAreCutSafely) {
    const size_t cap = mcp::schema::kMaxPointer;
    // A long key.
    std::string key(200, 'k');
    Outcome o = check(R"({"type":"object","additionalProperties":false})", "{\"" + key + "\":1}");
    EXPECT_FALSE(o.ok);
    EXPECT_STREQ(reason_name(o.failure.reason), "additional_property");
    EXPECT_EQ(std::string(o.failure.path), "/" + std::string(cap - 5, 'k') + "...");
    EXPECT_EQ(strlen(o.failure.path), cap - 1);

    // Multi-byte characters are never split, whatever the alignment.
    for (const char* ch : { "é", "日", "😀" }) {
        for (int pad = 0; pad < 4; ++pad) {
            std::string k = std::string(pad, 'p');
            for (int i = 0; i < 40; ++i)
                k += ch;
            Outcome u = check(R"({"additionalProperties":false})", "{\"" + k + "\":1}");
            EXPECT_FALSE(u.ok);
            size_t n = strlen(u.failure.path);
            EXPECT_LT(n, cap);
            EXPECT_GE(n, cap - 1 - 4);
            EXPECT_TRUE(valid_utf8(u.failure.path)) << ch << " pad " << pad;
            EXPECT_EQ(std::string(u.failure.path).substr(n - 3), "...");
            EXPECT_EQ(std::string(u.failure.path).rfind("/" + std::string(pad, 'p'), 0), 0u);
        }
    }

    // A short key with a NUL (escaped) cannot be carried whole in a C string: it is cut there.
    Outcome z = check(R"({"additionalProperties":false})", R"({"ab\u0000cd":1})");
    EXPECT_STREQ(z.failure.path, "/ab...");

    // A long key whose escapes expand past the buffer ("~" becomes "~0").
    Outcome t = check(R"({"additionalProperties":false})", "{\"" + std::string(100, '~') + "\":1}");
    EXPECT_LT(strlen(t.failure.path), cap);
    EXPECT_EQ(std::string(t.failure.path).substr(strlen(t.failure.path) - 3), "...");

    // A path of several members, cut in the last one.
    const std::string a(20, 'a'), b(20, 'b'), c(21, 'c');
    std::string deep = R"({"type":"object","properties":{")" + a + R"(":{"type":"object","properties":{")" + b +
                       R"(":{"type":"object","properties":{")" + c + R"(":{"type":"integer"}}}}}}})";
    Outcome d = check(deep, "{\"" + a + "\":{\"" + b + "\":{\"" + c + "\":\"x\"}}}");
    EXPECT_STREQ(reason_name(d.failure.reason), "type");
    std::string full = "/" + a + "/" + b + "/" + c;
    ASSERT_EQ(full.size(), cap);
    EXPECT_EQ(std::string(d.failure.path), full.substr(0, cap - 4) + "...");
    // A cut taken in a branch that then succeeded does not leak into the next member's path.
    std::string long_key(100, 'k');
    Outcome r = check(R"({"type":"object","properties":{")" + long_key +
                          R"(":{"type":"integer"},"z":{"type":"integer"}}})",
                      "{\"" + long_key + "\":1,\"z\":\"x\"}");
    EXPECT_STREQ(reason_name(r.failure.reason), "type");
    EXPECT_STREQ(r.failure.path, "/z");
}

TEST(Schema, FailureIsResetOnEachCall) {
    Doc s(R"({"type":"integer"})"), bad(R"("x")"), good("3");
    Failure f;
    EXPECT_FALSE(mcp::schema::validate(s.root(), bad.root(), f));
    EXPECT_EQ(f.reason, mcp::schema::Reason::Type);
    EXPECT_TRUE(mcp::schema::validate(s.root(), good.root(), f));
    EXPECT_EQ(f.reason, mcp::schema::Reason::None);
    EXPECT_STREQ(f.keyword, "");
    EXPECT_STREQ(f.path, "");
}

// A schema in the style of the kernel's tool input schemas.
const char* kWellBounded = R"({"type":"object","title":"args","properties":{)"
                           R"("q":{"type":"string","maxLength":8,"format":"name"},)"
                           R"("k":{"type":"integer","minimum":1,"maximum":9,"description":"count"},)"
                           R"("x":{"type":"number","exclusiveMinimum":-1,"exclusiveMaximum":1},)"
                           R"("v":{"type":"array","maxItems":4,"items":{"type":"number","minimum":-1,"maximum":1}},)"
                           R"("m":{"enum":["a","b",null]},)"
                           R"("s":{"type":"string","enum":["debug","info"]},)"
                           R"("o":{"type":["string","null"],"maxLength":3},)"
                           R"("f":{"type":"boolean"},)"
                           R"("n":{"type":"object","properties":{"a":{"type":"null"}},"required":["a"],)"
                           R"("additionalProperties":{"type":"integer","minimum":0,"maximum":1}}},)"
                           R"("required":["q"],"additionalProperties":false})";

// 2020-12 applicators and const (SEP-2106): each narrows the schema it sits in.
TEST(Schema, ApplicatorsNarrowTheSchema) {
    const char* any = R"({"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]})";
    EXPECT_VALID(any, R"({"a":1})");
    EXPECT_VALID(any, R"({"a":1,"b":2})");
    EXPECT_INVALID(any, R"({"c":1})", "no_alternative", "anyOf", "");
    const char* one = R"({"oneOf":[{"type":"integer"},{"type":"number","minimum":10}]})";
    EXPECT_VALID(one, "3");
    EXPECT_VALID(one, "10.5");
    EXPECT_INVALID(one, "12", "no_alternative", "oneOf", "") << "both match: not exactly one";
    EXPECT_INVALID(one, R"("x")", "no_alternative", "oneOf", "");
    const char* all = R"({"allOf":[{"type":"string"},{"maxLength":2}]})";
    EXPECT_VALID(all, R"("ab")");
    EXPECT_INVALID(all, R"("abc")", "too_long", "maxLength", "") << "allOf reports its member's own failure";
    EXPECT_INVALID(R"({"not":{"type":"null"}})", "null", "no_alternative", "not", "");
    EXPECT_VALID(R"({"not":{"type":"null"}})", "0");
    EXPECT_VALID(R"({"const":"on"})", R"("on")");
    EXPECT_INVALID(R"({"const":"on"})", R"("off")", "not_in_enum", "const", "");
    EXPECT_VALID(R"({"const":1})", "1.0");
    // if/then/else: the branch follows the condition; a missing branch imposes nothing.
    const char* cond = R"({"type":"object","if":{"properties":{"k":{"const":"p"}},"required":["k"]},)"
                       R"("then":{"required":["p"]},"else":{"required":["e"]}})";
    EXPECT_VALID(cond, R"({"k":"p","p":1})");
    EXPECT_INVALID(cond, R"({"k":"p","e":1})", "required", "required", "/p");
    EXPECT_VALID(cond, R"({"k":"x","e":1})");
    EXPECT_INVALID(cond, R"({"p":1})", "required", "required", "/e");
    EXPECT_VALID(R"({"if":{"type":"string"},"then":{"maxLength":1}})", "5");
    // Their shapes are checked like every keyword's.
    EXPECT_UNSUPPORTED(R"({"anyOf":[]})", "1", "anyOf", "");
    EXPECT_UNSUPPORTED(R"({"allOf":{"type":"string"}})", "1", "allOf", "");
    EXPECT_UNSUPPORTED(R"({"const":{"a":1}})", "1", "const", "");
    // A branch that cannot be evaluated (too deep) is refused, never read as "does not match".
    std::string deep = "{}";
    for (int i = 0; i < 20; ++i)
        deep = R"({"x":)" + deep + "}";
    const char* recursive = R"({"$defs":{"n":{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}}}},)"
                            R"("not":{"$ref":"#/$defs/n"}})";
    mcp::schema::Failure failure;
    json::Node sn[64], in[128];
    auto sd = json::Document::parse(recursive, sn);
    auto id = json::Document::parse(deep, in);
    ASSERT_TRUE(sd.ok() && id.ok());
    EXPECT_FALSE(mcp::schema::validate(sd->root(), id->root(), failure));
    EXPECT_EQ(failure.reason, mcp::schema::Reason::SchemaUnsupported);
    // Annotations of 2026-07-28 schemas.
    EXPECT_VALID(R"({"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region","$anchor":"r"}}})",
                 R"({"r":"eu"})");
}

// An applicator's subschemas need no bounds of their own: the schema around them has them.
TEST(Schema, CheckBoundedLooksThroughApplicators) {
    EXPECT_TRUE(
        bounded(R"({"type":"object","properties":{"a":{"type":"string","maxLength":4}},"additionalProperties":false,)"
                R"("anyOf":[{"required":["a"]}],"if":{"required":["a"]},"then":{"properties":{"a":{"const":"x"}}}})")
            .ok);
    Outcome o = bounded(R"({"type":"object","additionalProperties":false,"allOf":[{"pattern":"a"}]})");
    EXPECT_FALSE(o.ok) << "unknown keywords inside still fail closed";
    EXPECT_STREQ(o.failure.path, "/allOf/0/pattern");
}

TEST(Schema, CheckBoundedAcceptsAWellBoundedSchema) {
    Outcome o = bounded(kWellBounded);
    EXPECT_TRUE(o.ok) << reason_name(o.failure.reason) << " " << o.failure.keyword << " at " << o.failure.path;
    EXPECT_TRUE(bounded(R"({"type":"object","properties":{},"additionalProperties":false})").ok);
    EXPECT_TRUE(bounded(R"({"enum":[1,2]})").ok);
    // And the instances it describes validate.
    EXPECT_VALID(kWellBounded, R"({"q":"ab","k":3,"x":0.5,"v":[1,-1],"m":null,"s":"info","o":null,"f":true,)"
                               R"("n":{"a":null,"b":1}})");
    EXPECT_INVALID(kWellBounded, R"({"q":"ab","n":{"a":null,"b":2}})", "above_maximum", "maximum", "/n/b");
}

TEST(Schema, CheckBoundedNamesEachMissingBound) {
    struct Case {
        const char* property; // the schema of property "p"
        const char* reason;
        const char* keyword;
        const char* path;
    } cases[] = {
        { R"({"type":"string"})", "unbounded", "maxLength", "/properties/p" },
        { R"({"type":"string","minLength":1})", "unbounded", "maxLength", "/properties/p" },
        { R"({"type":["null","string"]})", "unbounded", "maxLength", "/properties/p" },
        { R"({"type":"integer","minimum":1})", "unbounded", "maximum", "/properties/p" },
        { R"({"type":"integer","maximum":1})", "unbounded", "minimum", "/properties/p" },
        { R"({"type":"number","exclusiveMaximum":1})", "unbounded", "minimum", "/properties/p" },
        { R"({"type":"number","minimum":0})", "unbounded", "maximum", "/properties/p" },
        { R"({"type":"array","items":{"type":"boolean"}})", "unbounded", "maxItems", "/properties/p" },
        { R"({"type":"array","maxItems":3})", "unbounded", "items", "/properties/p" },
        { R"({"type":"array","maxItems":3,"items":{"type":"string"}})", "unbounded", "maxLength",
          "/properties/p/items" },
        { R"({"type":"object"})", "unbounded", "additionalProperties", "/properties/p" },
        { R"({"type":"object","additionalProperties":true})", "unbounded", "additionalProperties", "/properties/p" },
        { R"({"type":"object","additionalProperties":{"type":"integer"}})", "unbounded", "minimum",
          "/properties/p/additionalProperties" },
        { R"({"type":"object","properties":{"i/j":{"type":"string"}},"additionalProperties":false})", "unbounded",
          "maxLength", "/properties/p/properties/i~1j" },
        { R"({"maxLength":3})", "unbounded", "type", "/properties/p" },
        { R"({})", "unbounded", "type", "/properties/p" },
        { R"({"type":"string","maxLength":3,"pattern":"a"})", "schema_unsupported", "", "/properties/p/pattern" },
        { R"({"type":"string","maxLength":"3"})", "schema_unsupported", "maxLength", "/properties/p" },
    };
    for (const auto& c : cases) {
        std::string schema = std::string(R"({"type":"object","properties":{"p":)") + c.property +
                             R"(},"additionalProperties":false})";
        Outcome o = bounded(schema);
        EXPECT_FALSE(o.ok) << schema;
        EXPECT_STREQ(reason_name(o.failure.reason), c.reason) << schema;
        EXPECT_STREQ(o.failure.keyword, c.keyword) << schema;
        EXPECT_STREQ(o.failure.path, c.path) << schema;
        EXPECT_STRNE(o.failure.message, "") << schema;
    }
    // The root itself.
    Outcome root = bounded(R"({"type":"object","properties":{}})");
    EXPECT_STREQ(reason_name(root.failure.reason), "unbounded");
    EXPECT_STREQ(root.failure.keyword, "additionalProperties");
    EXPECT_STREQ(root.failure.path, "");
}

TEST(Schema, CheckBoundedLimitsDepth) {
    const int limit = mcp::schema::kMaxBoundedDepth;
    EXPECT_TRUE(bounded(nested_arrays(limit)).ok);
    Outcome o = bounded(nested_arrays(limit + 1));
    EXPECT_FALSE(o.ok);
    EXPECT_STREQ(reason_name(o.failure.reason), "schema_unsupported");
    std::string at;
    for (int i = 0; i < limit; ++i)
        at += "/items";
    EXPECT_EQ(std::string(o.failure.path), at.substr(0, mcp::schema::kMaxPointer - 4) + "...");
    // validate() itself goes deeper.
    EXPECT_VALID(nested_arrays(limit + 1), nested_instance(limit + 1));
}

// JSON Schema 2020-12 local definitions (the conformance suite's SEP-1613 tool uses them).
TEST(Schema, LocalDefinitionsAndReferences) {
    const char* schema =
        R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
        R"("$defs":{"address":{"type":"object","properties":{"city":{"type":"string","maxLength":4}},)"
        R"("required":["city"],"additionalProperties":false}},)"
        R"("properties":{"name":{"type":"string","maxLength":8},"address":{"$ref":"#/$defs/address"}},)"
        R"("additionalProperties":false})";
    EXPECT_TRUE(bounded(schema).ok);
    EXPECT_VALID(schema, R"({"name":"ada","address":{"city":"Rome"}})");
    EXPECT_INVALID(schema, R"({"address":{"city":"Paris"}})", "too_long", "maxLength", "/address/city");
    EXPECT_INVALID(schema, R"({"address":{}})", "required", "required", "/address/city");
    EXPECT_INVALID(schema, R"({"address":{"city":"Rome","zip":1}})", "additional_property", "additionalProperties",
                   "/address/zip");
    // Unresolved, or with keywords beside it: refused whatever the instance.
    EXPECT_UNSUPPORTED(R"({"type":"object","properties":{"a":{"$ref":"#/$defs/none"}}})", "{}", "$ref",
                       "/properties/a");
    EXPECT_UNSUPPORTED(R"({"$defs":{"d":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/d","maxLength":1}}})",
                       "{}", "$ref", "/properties/a");
    // A definition is held to the bounds where it is defined.
    Outcome o = bounded(R"({"type":"object","$defs":{"d":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/d"}},)"
                        R"("additionalProperties":false})");
    EXPECT_FALSE(o.ok);
    EXPECT_STREQ(o.failure.keyword, "maxLength");
    EXPECT_STREQ(o.failure.path, "/$defs/d");
    // A definition that refers to itself: the schema is fine, an instance deeper than
    // kMaxSchemaDepth is refused rather than followed.
    const char* tree =
        R"({"$defs":{"n":{"type":"object","properties":{"c":{"$ref":"#/$defs/n"}},"additionalProperties":false}},)"
        R"("$ref":"#/$defs/n"})";
    EXPECT_TRUE(bounded(tree).ok);
    EXPECT_VALID(tree, R"({"c":{"c":{}}})");
    std::string deep;
    for (int i = 0; i < mcp::schema::kMaxSchemaDepth + 1; ++i)
        deep += R"({"c":)";
    deep += "{}" + std::string(mcp::schema::kMaxSchemaDepth + 1, '}');
    EXPECT_FALSE(check(tree, deep).ok);
}

// JSON Schema subset used to validate tools/call arguments: each keyword accepts and refuses
// with the exact reason and JSON pointer; unknown keywords fail closed; our own schemas must be
// bounded (every string a maxLength, every number a range, every array maxItems).
#include <json/json.h>
#include <mcp/schema/validator.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct Doc {
    std::string text;
    std::vector<json::Node> nodes = std::vector<json::Node>(4096);
    json::Document doc;
    explicit Doc(std::string t) : text(std::move(t)) {
        auto d = json::Document::parse(text, nodes);
        EXPECT_TRUE(d.ok()) << text;
        if (d.ok())
            doc = *d;
    }
    json::Value root() const { return doc.root(); }
};

struct Outcome {
    bool ok;
    mcp::schema::Failure failure;
};

Outcome check(const std::string& schema, const std::string& instance) {
    Doc s(schema), i(instance);
    Outcome o {};
    o.ok = mcp::schema::validate(s.root(), i.root(), o.failure);
    return o;
}

void expect_fail(const std::string& schema, const std::string& instance, const char* reason, const char* path) {
    Outcome o = check(schema, instance);
    EXPECT_FALSE(o.ok) << schema << " / " << instance;
    EXPECT_STREQ(mcp::schema::reason_name(o.failure.reason), reason) << schema << " / " << instance;
    EXPECT_STREQ(o.failure.path, path) << schema << " / " << instance;
}

} // namespace

TEST(Schema, Types) {
    EXPECT_TRUE(check(R"({"type":"string"})", R"("x")").ok);
    expect_fail(R"({"type":"string"})", "1", "type", "");
    EXPECT_TRUE(check(R"({"type":"integer"})", "42").ok);
    EXPECT_TRUE(check(R"({"type":"integer"})", "42.0").ok) << "an integral number is an integer";
    expect_fail(R"({"type":"integer"})", "4.5", "type", "");
    EXPECT_TRUE(check(R"({"type":"number"})", "4.5").ok);
    EXPECT_TRUE(check(R"({"type":"integer"})", "1e19").ok) << "beyond int64 but integral";
    EXPECT_TRUE(check(R"({"type":"integer"})", "-99223372036854775807320732236854775807").ok);
    expect_fail(R"({"type":"integer"})", "1e-300", "type", "");
    EXPECT_TRUE(check(R"({"type":"number"})", "4").ok);
    EXPECT_TRUE(check(R"({"type":["string","null"]})", "null").ok);
    expect_fail(R"({"type":["string","null"]})", "true", "type", "");
    EXPECT_TRUE(check(R"({"type":"boolean"})", "false").ok);
    expect_fail(R"({"type":"object"})", "[]", "type", "");
    expect_fail(R"({"type":"array"})", "{}", "type", "");
}

TEST(Schema, ObjectsRequiredAndAdditionalProperties) {
    const std::string s = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false})";
    EXPECT_TRUE(check(s, R"({"a":1})").ok);
    EXPECT_TRUE(check(s, R"({"a":1,"b":"x"})").ok);
    expect_fail(s, R"({"b":"x"})", "required", "/a");
    expect_fail(s, R"({"a":1,"c":2})", "additional_property", "/c");
    expect_fail(s, R"({"a":"1"})", "type", "/a");
    // additionalProperties as a schema applies to the unlisted members only.
    const std::string t = R"({"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer","maximum":5}})";
    EXPECT_TRUE(check(t, R"({"a":"x","n":3})").ok);
    expect_fail(t, R"({"a":"x","n":9})", "above_maximum", "/n");
    // Escaped keys are compared unescaped, and pointers escape '/' and '~' (RFC 6901).
    EXPECT_TRUE(check(R"({"type":"object","properties":{"é":{"type":"integer"}},"additionalProperties":false})", R"({"\u00e9":1})").ok);
    expect_fail(R"({"type":"object","additionalProperties":false})", R"({"a/b~c":1})", "additional_property", "/a~1b~0c");
}

TEST(Schema, StringLengthsCountCodePoints) {
    const std::string s = R"({"type":"string","minLength":2,"maxLength":3})";
    EXPECT_TRUE(check(s, R"("abc")").ok);
    expect_fail(s, R"("abcd")", "too_long", "");
    expect_fail(s, R"("a")", "too_short", "");
    EXPECT_TRUE(check(s, R"("ééé")").ok) << "three code points, six bytes";
    EXPECT_TRUE(check(s, R"("\u00e9\u00e9\u00e9")").ok) << "escapes count as the characters they stand for";
    EXPECT_TRUE(check(s, R"("😀😀")").ok);
    EXPECT_TRUE(check(s, R"("\ud83d\ude00\ud83d\ude00")").ok) << "a surrogate pair is one code point";
    expect_fail(s, R"("\n\t\"\\")", "too_long", "");
}

TEST(Schema, NumberRanges) {
    const std::string s = R"({"type":"number","minimum":-1.5,"maximum":10})";
    EXPECT_TRUE(check(s, "-1.5").ok);
    EXPECT_TRUE(check(s, "10").ok);
    expect_fail(s, "10.0001", "above_maximum", "");
    expect_fail(s, "-2", "below_minimum", "");
    const std::string e = R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":100})";
    expect_fail(e, "0", "below_minimum", "");
    expect_fail(e, "100", "above_maximum", "");
    EXPECT_TRUE(check(e, "1").ok);
    // Exact for large integers (a double would round 2^53 + 1 down to 2^53).
    expect_fail(R"({"type":"integer","maximum":9007199254740992})", "9007199254740993", "above_maximum", "");
    expect_fail(R"({"type":"number","maximum":1e300})", "1e308", "above_maximum", "");
}

TEST(Schema, EnumsCompareValues) {
    const std::string s = R"({"enum":["a","b\u00e9",1,true,null]})";
    EXPECT_TRUE(check(s, R"("a")").ok);
    EXPECT_TRUE(check(s, R"("bé")").ok);
    EXPECT_TRUE(check(s, R"("b\u00e9")").ok);
    EXPECT_TRUE(check(s, "1.0").ok);
    EXPECT_TRUE(check(s, "true").ok);
    EXPECT_TRUE(check(s, "null").ok);
    expect_fail(s, R"("c")", "not_in_enum", "");
    expect_fail(s, "false", "not_in_enum", "");
    expect_fail(s, "2", "not_in_enum", "");
}

TEST(Schema, ArraysAndNestedPaths) {
    const std::string s = R"({"type":"object","properties":{"items":{"type":"array","minItems":1,"maxItems":3,"items":)"
                          R"({"type":"object","properties":{"name":{"type":"string","maxLength":4}},"additionalProperties":false}}}})";
    EXPECT_TRUE(check(s, R"({"items":[{"name":"ab"}]})").ok);
    expect_fail(s, R"({"items":[]})", "too_few_items", "/items");
    expect_fail(s, R"({"items":[{},{},{},{}]})", "too_many_items", "/items");
    expect_fail(s, R"({"items":[{"name":"ok"},{"name":"ok"},{"name":"toolong"}]})", "too_long", "/items/2/name");
    expect_fail(s, R"({"items":[{"name":"ok","x":1}]})", "additional_property", "/items/0/x");
}

TEST(Schema, NamesAndPathsNeverClimb) {
    const std::string name = R"({"type":"string","maxLength":64,"format":"name"})";
    const std::string path = R"({"type":"string","maxLength":64,"format":"path"})";
    for (const char* good : { R"("docs")", R"("my-collection_1.v2")", R"("a:b")" })
        EXPECT_TRUE(check(name, good).ok) << good;
    for (const char* bad : { R"("..")", R"("a..b")", R"(".hidden")", R"("a/b")", R"("")", R"("sp ace")", R"("\u002e\u002e")" })
        expect_fail(name, bad, "invalid_name", "");
    EXPECT_TRUE(check(path, R"("a/b/c.txt")").ok);
    for (const char* bad : { R"("../etc")", R"("a/../b")", R"("/abs")", R"("a//b")", R"("a/")", R"("a/.git")" })
        expect_fail(path, bad, "invalid_name", "");
}

TEST(Schema, UnknownKeywordsFailClosed) {
    for (const char* s : { R"({"type":"string","pattern":"^a"})", R"({"oneOf":[{"type":"string"}]})",
                           R"({"type":"string","format":"email"})", R"({"$ref":"#/x"})", R"({"type":"strang"})" }) {
        Outcome o = check(s, R"("a")");
        EXPECT_FALSE(o.ok) << s;
        EXPECT_STREQ(mcp::schema::reason_name(o.failure.reason), "schema_unsupported") << s;
    }
    EXPECT_TRUE(check(R"({"type":"string","title":"T","description":"D","default":"x","examples":["y"]})", R"("a")").ok)
        << "annotations are allowed";
}

TEST(Schema, DepthIsBoundedByTheSchema) {
    std::string schema, instance;
    for (int i = 0; i < 20; ++i) {
        schema += R"({"type":"array","items":)";
        instance += "[";
    }
    schema += R"({"type":"integer"})";
    instance += "1";
    for (int i = 0; i < 20; ++i) {
        schema += "}";
        instance += "]";
    }
    Outcome o = check(schema, instance);
    EXPECT_FALSE(o.ok);
    EXPECT_STREQ(mcp::schema::reason_name(o.failure.reason), "schema_unsupported");
}

TEST(Schema, LongPathsAreTruncatedSafely) {
    std::string key(200, 'k');
    Outcome o = check(R"({"type":"object","additionalProperties":false})", "{\"" + key + "\":1}");
    EXPECT_FALSE(o.ok);
    EXPECT_LT(strlen(o.failure.path), sizeof o.failure.path);
    EXPECT_EQ(o.failure.path[0], '/');
}

TEST(Schema, BoundedSchemasAreRecognised) {
    auto bounded = [](const std::string& s) {
        Doc d(s);
        mcp::schema::Failure f;
        bool ok = mcp::schema::check_bounded(d.root(), f);
        return std::make_pair(ok, std::string(f.keyword ? f.keyword : ""));
    };
    EXPECT_TRUE(bounded(R"({"type":"object","properties":{"q":{"type":"string","maxLength":8},"k":{"type":"integer","minimum":1,"maximum":9},)"
                        R"("v":{"type":"array","maxItems":4,"items":{"type":"number","minimum":-1,"maximum":1}},)"
                        R"("m":{"type":"string","maxLength":8,"enum":["a","b"]}},"additionalProperties":false})").first);
    EXPECT_EQ(bounded(R"({"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false})").second, "maxLength");
    EXPECT_EQ(bounded(R"({"type":"object","properties":{"k":{"type":"integer","minimum":1}},"additionalProperties":false})").second,
              "minimum/maximum");
    EXPECT_EQ(bounded(R"({"type":"object","properties":{"v":{"type":"array","items":{"type":"number","minimum":0,"maximum":1}}},"additionalProperties":false})").second,
              "maxItems");
    EXPECT_EQ(bounded(R"({"type":"object","properties":{}})").second, "additionalProperties");
    EXPECT_FALSE(bounded(R"({"type":"object","properties":{"x":{"type":"string","maxLength":2,"pattern":"a"}},"additionalProperties":false})").first);
}

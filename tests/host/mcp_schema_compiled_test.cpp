// Input schemas compiled once (mcp/schema/compiled.h): a compiled schema gives validate()'s outcome
// and failure on the text (the validator's own cases check that too, mcp_schema_test.cpp); an
// unreadable or unsupported schema still fails closed; a set compiles each schema once, into its
// bounded pool, and says when one does not fit rather than compiling it somewhere else.
#include <json/json.h>
#include <mcp/fixtures/conformance.h>
#include <mcp/schema/compiled.h>
#include <mcp/schema/validator.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using mcp::schema::Compiled;
using mcp::schema::CompiledSet;
using mcp::schema::Failure;
using mcp::schema::Reason;

constexpr const char* kSearch =
    R"({"type":"object","properties":{"q":{"type":"string","maxLength":8},"k":{"type":"integer","minimum":1,)"
    R"("maximum":10}},"required":["q"],"additionalProperties":false})";

struct Instance {
    std::string text;
    json::Node nodes[64];
    json::Document doc;
    explicit Instance(std::string t) : text(std::move(t)) {
        auto d = json::Document::parse(text, nodes);
        EXPECT_TRUE(d.ok()) << text;
        if (d.ok())
            doc = *d;
    }
};

bool by_text(const char* schema, const Instance& i, Failure& out) {
    std::vector<json::Node> nodes(mcp::schema::kMaxSchemaNodes);
    auto doc = json::Document::parse(schema, nodes);
    return doc && mcp::schema::validate(doc->root(), i.doc.root(), out);
}

void expect_same(const Failure& a, const Failure& b) {
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_STREQ(a.keyword, b.keyword);
    EXPECT_STREQ(a.message, b.message);
    EXPECT_STREQ(a.path, b.path);
}

TEST(SchemaCompiled, ValidatesLikeTheText) {
    std::vector<json::Node> pool(mcp::schema::kMaxSchemaNodes);
    Compiled c;
    ASSERT_TRUE(c.compile(kSearch, pool));
    EXPECT_EQ(c.source(), kSearch);
    EXPECT_GT(c.nodes_used(), 0u);
    for (const char* args : { R"({"q":"a"})", R"({"q":"a","k":3})", R"({"k":3})", R"({"q":"far too long"})",
                              R"({"q":"a","k":11})", R"({"q":"a","x":1})", R"({"q":7})", "[]" }) {
        Instance i(args);
        Failure compiled, text;
        EXPECT_EQ(c.validate(i.doc.root(), compiled), by_text(kSearch, i, text)) << args;
        expect_same(compiled, text);
    }
    // The same compiled schema serves call after call: a failure leaves nothing behind.
    Instance bad(R"({"q":"a","x":1})"), good(R"({"q":"a"})");
    Failure f;
    EXPECT_FALSE(c.validate(bad.doc.root(), f));
    EXPECT_EQ(f.reason, Reason::AdditionalProperty);
    EXPECT_STREQ(f.path, "/x");
    EXPECT_TRUE(c.validate(good.doc.root(), f));
    EXPECT_EQ(f.reason, Reason::None);
    EXPECT_STREQ(f.path, "");
}

TEST(SchemaCompiled, UnreadableTextFailsClosed) {
    std::vector<json::Node> pool(mcp::schema::kMaxSchemaNodes);
    Instance i("{}");
    for (const char* text : { "{", "", R"({"type":"object",})", "not json" }) {
        Compiled c;
        ASSERT_TRUE(c.compile(text, pool)) << text; // compiled as unreadable: there was room
        Failure f;
        EXPECT_FALSE(c.validate(i.doc.root(), f)) << text;
        EXPECT_EQ(f.reason, Reason::SchemaUnsupported);
        EXPECT_STREQ(f.keyword, "");
        EXPECT_STREQ(f.path, "");
    }
}

TEST(SchemaCompiled, UnsupportedSchemaKeepsItsRefusal) {
    const char* schema = R"({"type":"object","properties":{"q":{"type":"string","pattern":"^a"}}})";
    std::vector<json::Node> pool(mcp::schema::kMaxSchemaNodes);
    Compiled c;
    ASSERT_TRUE(c.compile(schema, pool));
    Instance i(R"({"q":"a"})");
    Failure compiled, text;
    EXPECT_FALSE(c.validate(i.doc.root(), compiled));
    EXPECT_FALSE(by_text(schema, i, text));
    EXPECT_EQ(compiled.reason, Reason::SchemaUnsupported);
    EXPECT_STREQ(compiled.path, "/properties/q/pattern");
    expect_same(compiled, text);
}

// A schema over kMaxSchemaNodes is no schema the pipeline serves, compiled or parsed per call.
TEST(SchemaCompiled, TooManyNodesIsUnreadable) {
    std::string big = R"({"type":"string","enum":[)";
    for (size_t n = 0; n < mcp::schema::kMaxSchemaNodes; ++n)
        big += (n ? ",\"" : "\"") + std::to_string(n) + "\"";
    big += "]}";
    std::vector<json::Node> pool(2 * mcp::schema::kMaxSchemaNodes);
    Compiled c;
    ASSERT_TRUE(c.compile(big.c_str(), pool));
    Instance i(R"("1")");
    Failure f;
    EXPECT_FALSE(c.validate(i.doc.root(), f));
    EXPECT_EQ(f.reason, Reason::SchemaUnsupported);
    EXPECT_EQ(c.nodes_used(), 0u);
}

// With fewer nodes than kMaxSchemaNodes left, a text that fills them is not called unreadable:
// compile() says it did not fit, and the set leaves the schema to its caller.
TEST(SchemaCompiled, ShortPoolIsNotUnreadable) {
    std::vector<json::Node> pool(4);
    Compiled c;
    EXPECT_FALSE(c.compile(kSearch, pool));
    EXPECT_EQ(c.source(), nullptr);
    // A text that is wrong before the pool runs out is unreadable whatever the pool's size.
    EXPECT_TRUE(c.compile("{,", pool));
}

TEST(SchemaCompiledSet, CompilesEachSchemaOnce) {
    auto set = std::make_unique<CompiledSet>();
    const Compiled* first = set->get(0, kSearch);
    ASSERT_NE(first, nullptr);
    const size_t used = set->nodes_used();
    EXPECT_EQ(used, first->nodes_used());
    EXPECT_EQ(set->get(0, kSearch), first); // found again, not compiled again
    EXPECT_EQ(set->nodes_used(), used);
    const Compiled* second = set->get(1, "{}");
    ASSERT_NE(second, nullptr);
    EXPECT_NE(second, first);
    EXPECT_EQ(set->nodes_used(), used + 1);
    // Another text at a position (a server whose tools changed) is compiled anew.
    const char* other = R"({"type":"object","additionalProperties":false})";
    const Compiled* replaced = set->get(0, other);
    ASSERT_NE(replaced, nullptr);
    EXPECT_EQ(replaced->source(), other);
    Instance i(R"({"q":"a"})");
    Failure f;
    EXPECT_FALSE(replaced->validate(i.doc.root(), f));
    EXPECT_EQ(f.reason, Reason::AdditionalProperty);
    EXPECT_EQ(set->get(CompiledSet::kMaxSchemas, kSearch), nullptr); // past its positions
}

// The pool is bounded: once it cannot hold a schema, get() answers nullptr (the pipeline then
// parses that schema per call, as before) and does not try again for that text.
TEST(SchemaCompiledSet, FullPoolLeavesTheSchemaToTheCaller) {
    auto set = std::make_unique<CompiledSet>();
    std::string big = R"({"type":"string","enum":[)";
    for (size_t n = 0; n < 400; ++n)
        big += (n ? ",\"" : "\"") + std::to_string(n) + "\"";
    big += "]}";
    size_t placed = 0;
    while (placed < CompiledSet::kMaxSchemas && set->get(placed, big.c_str()))
        ++placed;
    ASSERT_LT(placed, CompiledSet::kMaxSchemas);
    EXPECT_EQ(placed, CompiledSet::kPoolNodes / set->get(0, big.c_str())->nodes_used());
    const size_t used = set->nodes_used();
    EXPECT_EQ(set->get(placed, big.c_str()), nullptr);
    EXPECT_EQ(set->get(placed, big.c_str()), nullptr);
    EXPECT_EQ(set->nodes_used(), used);
    // A small schema still fits what is left.
    EXPECT_NE(set->get(placed + 1, "{}"), nullptr);
}

// The conformance suite's tools (their schemas use the most keywords) fit one set, and each
// compiled schema is the one its text reads as.
TEST(SchemaCompiledSet, TheConformanceToolsFitOneSet) {
    auto set = std::make_unique<CompiledSet>();
    auto tools = mcp::fixtures::tools();
    ASSERT_LE(tools.size(), CompiledSet::kMaxSchemas);
    Instance empty("{}");
    for (size_t i = 0; i < tools.size(); ++i) {
        const Compiled* c = set->get(i, tools[i].input_schema);
        ASSERT_NE(c, nullptr) << tools[i].name;
        Failure compiled, text;
        EXPECT_EQ(c->validate(empty.doc.root(), compiled), by_text(tools[i].input_schema, empty, text))
            << tools[i].name;
        expect_same(compiled, text);
    }
    EXPECT_LT(set->nodes_used(), CompiledSet::kPoolNodes / 2);
}

} // namespace

// json::Document::copy_of and spans(): a parsed value moved into buffers of its own is node for
// node the parse of its copied text, its strings read from the copy, and a holder can check that
// a tree covers exactly the text it holds (kernel/mcpd hands a call's arguments to its tool task
// this way).
#include <json/json.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

void expect_same_nodes(const json::Document& a, const json::Document& b, const std::string& what) {
    ASSERT_EQ(a.node_count(), b.node_count()) << what;
    for (uint32_t i = 0; i < a.node_count(); ++i) {
        const json::Node &x = a.node(i), &y = b.node(i);
        EXPECT_TRUE(x.type == y.type && x.flag == y.flag && x.key_escaped == y.key_escaped && x.start == y.start &&
                    x.length == y.length && x.key_start == y.key_start && x.key_length == y.key_length &&
                    x.key_hash == y.key_hash && x.count == y.count && x.end == y.end)
            << what << ": node " << i;
    }
}

// Every value of `text`, copied on its own, against a fresh parse of its JSON text.
void check_every_value(const std::string& text) {
    std::vector<json::Node> nodes(text.size() + 1);
    auto doc = json::Document::parse(text, nodes);
    ASSERT_TRUE(doc.ok()) << text;
    for (uint32_t i = 0; i < doc->node_count(); ++i) {
        json::Value v(&*doc, i);
        const std::string own(v.json_text());
        std::vector<json::Node> fresh_nodes(own.size() + 1);
        auto fresh = json::Document::parse(own, fresh_nodes);
        ASSERT_TRUE(fresh.ok()) << own;
        std::vector<char> copy_text(own.size());
        std::vector<json::Node> copy_nodes(v.subtree_nodes());
        auto copy = json::Document::copy_of(v, copy_text, copy_nodes);
        ASSERT_TRUE(copy.ok()) << own;
        EXPECT_EQ(copy->text(), own);
        EXPECT_EQ(copy->text().data(), copy_text.data());
        EXPECT_TRUE(copy->spans({ copy_text.data(), copy_text.size() }));
        expect_same_nodes(*copy, *fresh, own + " (in " + text + ")");
    }
}

} // namespace

TEST(JsonCopy, EveryValueIsTheParseOfItsCopiedText) {
    const char* docs[] = {
        R"({"collection": "c", "ids": [1, 2], "vectors": [[0.5, -1e-3], [2, 3]]})",
        R"({"": 1, "a": {"": [], "b": {}}, "c": [{"": ""}]})",              // empty keys
        R"({"\u0061b": "x\"y", "k\n": ["\ud83d\ude00", "é", true, null]})", // escaped keys and strings
        R"(  [ 1 , [ [ ] ] , { "a" : [ { } ] } , "s" , -0.0e+1 ]  )",       // whitespace everywhere
        R"("just a string")",
        "42",
        "null",
        "{}",
    };
    for (const char* d : docs)
        check_every_value(d);
}

TEST(JsonCopy, RandomDocuments) {
    std::mt19937 rng(34);
    for (int iter = 0; iter < 100; ++iter) {
        std::string text;
        std::vector<bool> object; // the open containers
        int values = 0;
        auto value_start = [&] {
            if (!object.empty() && object.back()) {
                static const char* keys[] = { "", "k", "\\u006b2", "a\\\"b", "long_key_name" };
                text += '"' + std::string(keys[rng() % 5]) + "_" + std::to_string(values) + "\":";
            }
        };
        text += '{';
        object.push_back(true);
        bool first = true;
        while (!object.empty()) {
            int op = int(rng() % 9);
            if (op == 0 || values > 80) {
                text += object.back() ? '}' : ']';
                object.pop_back();
                first = false;
                continue;
            }
            if (!first)
                text += rng() % 2 ? ", " : ",";
            first = false;
            value_start();
            ++values;
            if (op == 1 && object.size() < 12) {
                text += '{';
                object.push_back(true);
                first = true;
            } else if (op == 2 && object.size() < 12) {
                text += '[';
                object.push_back(false);
                first = true;
            } else if (op == 3) {
                text += "\"s\\n" + std::to_string(rng() % 100) + '"';
            } else if (op == 4) {
                text += rng() % 2 ? "true" : "null";
            } else {
                text += std::to_string(int32_t(rng())) + (rng() % 2 ? ".25e-3" : "");
            }
        }
        check_every_value(text);
    }
}

TEST(JsonCopy, TheCopyOutlivesItsSource) {
    std::string text = R"({"collection": "a\u0062c", "ids": [7], "nested": {"x": "y"}})";
    std::vector<json::Node> nodes(32);
    auto doc = json::Document::parse(text, nodes);
    ASSERT_TRUE(doc.ok());
    json::Value nested = doc->root().find("nested");
    char copy_text[64];
    json::Node copy_nodes[8];
    auto whole = json::Document::copy_of(doc->root(), copy_text, copy_nodes);
    ASSERT_TRUE(whole.ok());
    char sub_text[16];
    json::Node sub_nodes[2];
    auto sub = json::Document::copy_of(nested, sub_text, sub_nodes);
    ASSERT_TRUE(sub.ok());
    // The source goes (the bridge's line buffer and message arena move on).
    std::fill(text.begin(), text.end(), 'X');
    std::fill(nodes.begin(), nodes.end(), json::Node {});
    EXPECT_TRUE(whole->root().find("collection").string_equals("abc"));
    EXPECT_EQ(whole->root().find("ids").at(0).as_int64(), 7);
    EXPECT_EQ(whole->root().find("nested").find("x").plain_string(), "y");
    EXPECT_EQ(sub->text(), R"({"x": "y"})");
    EXPECT_EQ(sub->root().find("x").plain_string(), "y");
    EXPECT_TRUE(sub->root().first().key_equals("x"));
}

TEST(JsonCopy, RefusesBuffersTooSmallAndInvalidValues) {
    std::string text = R"({"a": [1, 2, 3]})";
    json::Node nodes[8];
    auto doc = json::Document::parse(text, nodes);
    ASSERT_TRUE(doc.ok());
    json::Value a = doc->root().find("a");
    ASSERT_EQ(a.subtree_nodes(), 4u);
    EXPECT_EQ(doc->root().subtree_nodes(), 5u);
    EXPECT_EQ(json::Value().subtree_nodes(), 0u);
    char t[9];
    json::Node n[4];
    EXPECT_EQ(json::Document::copy_of(a, { t, 8 }, n).error(), ktl::Error::Truncated); // "[1, 2, 3]" is 9
    EXPECT_EQ(json::Document::copy_of(a, t, { n, 3 }).error(), ktl::Error::Truncated);
    EXPECT_EQ(json::Document::copy_of(json::Value(), t, n).error(), ktl::Error::BadHandle);
    EXPECT_TRUE(json::Document::copy_of(a, t, n).ok());
}

TEST(JsonCopy, SpansOnlyItsOwnWholeText) {
    std::string text = R"({"a": {"b": 1}})";
    json::Node nodes[4];
    auto doc = json::Document::parse(text, nodes);
    ASSERT_TRUE(doc.ok());
    EXPECT_TRUE(doc->spans(text));
    const std::string equal = text; // the same bytes elsewhere: not the text the tree is over
    EXPECT_FALSE(doc->spans(equal));
    EXPECT_FALSE(doc->spans(std::string_view(text).substr(0, text.size() - 1)));
    EXPECT_FALSE(json::Document().spans(text));
    // Whitespace around the root: the root's text is not the whole text.
    std::string padded = " {} ";
    json::Node pn[1];
    auto p = json::Document::parse(padded, pn);
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE(p->spans(padded));
    // A copy spans its own buffer, not the source's text.
    char t[16];
    json::Node n[4];
    auto copy = json::Document::copy_of(doc->root(), t, n);
    ASSERT_TRUE(copy.ok());
    EXPECT_TRUE(copy->spans({ t, text.size() }));
    EXPECT_FALSE(copy->spans(text));
    EXPECT_FALSE(copy->spans({ t, sizeof t }));
}

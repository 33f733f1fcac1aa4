// JSON reader and writer: RFC 8259 acceptance and rejection tables, limits, UTF-8 and escapes,
// exact integers, doubles against strtod, navigation, writer round trips and misuse.
#include <json/json.h>
#include <json/writer.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Parsed {
    std::string text; // the document views into it
    std::vector<json::Node> nodes;
    json::ParseError error;
    ktl::Result<json::Document> doc { ktl::Error::Corrupt };
};

std::unique_ptr<Parsed> parse(const std::string& text, size_t arena = 4096, json::Limits limits = {}) {
    auto p = std::make_unique<Parsed>();
    p->text = text;
    p->nodes.resize(arena);
    p->doc = json::Document::parse(p->text, p->nodes, limits, &p->error);
    return p;
}

} // namespace

TEST(JsonParse, AcceptsValidDocuments) {
    const char* valid[] = {
        "0",
        "-0",
        "1",
        "-1",
        "123",
        "1.5",
        "-1.5e10",
        "1E+2",
        "1e-2",
        "0.0",
        "1.0e0",
        "true",
        "false",
        "null",
        "\"\"",
        "\"abc\"",
        "\" \\\" \\\\ \\/ \\b \\f \\n \\r \\t \"",
        "\"\\u0041\"",
        "\"\\ud83d\\ude00\"",
        "\"\xc3\xa9\"",
        "\"\xe2\x82\xac\"",
        "\"\xf0\x9f\x98\x80\"",
        "[]",
        "{}",
        "[1,2,3]",
        "[ 1 , 2 ]",
        "{\"a\":1}",
        "{\"a\":{\"b\":[true,false,null]}}",
        " \t\r\n[\n]\n ",
        "[[[[[[]]]]]]",
        "{\"\":0}",
        "[\"\\u0000\"]",
        "{\"a\":1,\"b\":2}",
        "[{}, [], \"\", 0]",
        "1.7976931348623157e308",
        "5e-324",
        "{\"a\\u0062\":1,\"ab\\u0063\":2}",
        "[-1e-7]",
        "\"\x7f\"",
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}",
    };
    for (const char* text : valid) {
        auto p = parse(text);
        EXPECT_TRUE(p->doc.ok()) << "rejected valid: " << text << " (" << json::reason_name(p->error.reason) << " at "
                                 << p->error.offset << ")";
    }
}

TEST(JsonParse, RejectsInvalidDocumentsWithReasons) {
    struct Case {
        const char* text;
        json::Reason reason;
    };
    const Case invalid[] = {
        { "", json::Reason::Empty },
        { "   ", json::Reason::Empty },
        { "[", json::Reason::UnexpectedEnd },
        { "{", json::Reason::UnexpectedEnd },
        { "[1,]", json::Reason::BadToken },
        { "{\"a\":1,}", json::Reason::BadToken },
        { "[1 2]", json::Reason::BadToken },
        { "{\"a\" 1}", json::Reason::BadToken },
        { "{a:1}", json::Reason::BadToken },
        { "{\"a\":}", json::Reason::BadToken },
        { "[01]", json::Reason::BadNumber },
        { "-", json::Reason::BadNumber },
        { "1.", json::Reason::BadNumber },
        { ".5", json::Reason::BadToken },
        { "1e", json::Reason::BadNumber },
        { "1e+", json::Reason::BadNumber },
        { "+1", json::Reason::BadToken },
        { "NaN", json::Reason::BadToken },
        { "Infinity", json::Reason::BadToken },
        { "-Infinity", json::Reason::BadNumber },
        { "tru", json::Reason::BadToken },
        { "truex", json::Reason::BadToken },
        { "nul", json::Reason::BadToken },
        { "True", json::Reason::BadToken },
        { "\"abc", json::Reason::UnexpectedEnd },
        { "\"\\x\"", json::Reason::BadEscape },
        { "\"\\u12\"", json::Reason::BadEscape },
        { "\"\\u12g4\"", json::Reason::BadEscape },
        { "\"\\ud800\"", json::Reason::BadEscape },
        { "\"\\udc00\"", json::Reason::BadEscape },
        { "\"\\ud800\\u0041\"", json::Reason::BadEscape },
        { "\"a\nb\"", json::Reason::ControlCharacter },
        { "\"\t\"", json::Reason::ControlCharacter },
        { "\"\xc0\xaf\"", json::Reason::BadUtf8 },
        { "\"\xe0\x80\xaf\"", json::Reason::BadUtf8 },
        { "\"\xed\xa0\x80\"", json::Reason::BadUtf8 },
        { "\"\xf4\x90\x80\x80\"", json::Reason::BadUtf8 },
        { "\"\x80\"", json::Reason::BadUtf8 },
        { "\"\xc3\"", json::Reason::BadUtf8 },
        { "\"\xff\"", json::Reason::BadUtf8 },
        { "[1]x", json::Reason::TrailingData },
        { "1 2", json::Reason::TrailingData },
        { "{}{}", json::Reason::TrailingData },
        { "{\"a\":1,\"a\":2}", json::Reason::DuplicateKey },
        { "{\"a\":1,\"\\u0061\":2}", json::Reason::DuplicateKey },
        { "[1,,2]", json::Reason::BadToken },
        { "{,}", json::Reason::BadToken },
        { "]", json::Reason::BadToken },
        { "/*c*/1", json::Reason::BadToken },
        { "'a'", json::Reason::BadToken },
        { "1e999", json::Reason::None },
    };
    for (const auto& c : invalid) {
        auto p = parse(c.text);
        if (c.reason == json::Reason::None) {
            // Syntactically valid, but its value does not fit a double: parse ok, as_double refuses.
            ASSERT_TRUE(p->doc.ok()) << c.text;
            EXPECT_FALSE(p->doc->root().as_double()) << c.text;
            continue;
        }
        EXPECT_FALSE(p->doc.ok()) << "accepted invalid: " << c.text;
        EXPECT_EQ(p->error.reason, c.reason) << c.text << " gave " << json::reason_name(p->error.reason);
    }
}

TEST(JsonParse, EveryTruncationOfAValidDocumentIsRejected) {
    std::string doc = "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\","
                      "\"arguments\":{\"v\":[1.5,-2e3,true,null,{\"k\":\"\xf0\x9f\x98\x80\"}]}}}";
    ASSERT_TRUE(parse(doc)->doc.ok());
    for (size_t len = 0; len < doc.size(); ++len)
        EXPECT_FALSE(parse(doc.substr(0, len))->doc.ok()) << "accepted prefix of length " << len;
}

TEST(JsonParse, Limits) {
    json::Limits l;
    l.max_depth = 4;
    EXPECT_TRUE(parse("[[[[1]]]]", 64, l)->doc.ok());
    auto deep = parse("[[[[[1]]]]]", 64, l);
    EXPECT_FALSE(deep->doc.ok());
    EXPECT_EQ(deep->error.reason, json::Reason::TooDeep);
    std::string very_deep(100000, '[');
    EXPECT_EQ(parse(very_deep)->error.reason, json::Reason::TooDeep) << "no recursion, no stack overflow";

    l = {};
    l.max_string = 5;
    EXPECT_TRUE(parse("\"12345\"", 4, l)->doc.ok());
    EXPECT_EQ(parse("\"123456\"", 4, l)->error.reason, json::Reason::TooLong);
    l = {};
    l.max_members = 2;
    EXPECT_EQ(parse("{\"a\":1,\"b\":2,\"c\":3}", 16, l)->error.reason, json::Reason::TooManyMembers);
    l = {};
    l.max_items = 3;
    EXPECT_EQ(parse("[1,2,3,4]", 16, l)->error.reason, json::Reason::TooManyItems);
    l = {};
    l.max_input = 8;
    EXPECT_EQ(parse("[1,2,3,4,5]", 16, l)->error.reason, json::Reason::TooLong);
    EXPECT_EQ(parse("[1,2,3]", 3)->error.reason, json::Reason::ArenaFull);
    EXPECT_TRUE(parse("[1,2,3]", 4)->doc.ok());
    std::string long_number = "1" + std::string(100, '0');
    EXPECT_EQ(parse(long_number)->error.reason, json::Reason::TooLong);
}

TEST(JsonParse, ErrorOffsetsPointAtTheProblem) {
    auto p = parse("{\"a\": [1, 2, x]}");
    EXPECT_EQ(p->error.reason, json::Reason::BadToken);
    EXPECT_EQ(p->error.offset, 13u);
}

TEST(JsonValue, NavigationAndTypedAccess) {
    auto p = parse("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/call\",\"params\":{\"name\":\"kernel_info\","
                   "\"arguments\":{\"n\":[1,2,{\"deep\":true}],\"s\":\"caf\\u00e9\"}},\"x\":null}");
    ASSERT_TRUE(p->doc.ok());
    json::Value root = p->doc->root();
    ASSERT_TRUE(root.is_object());
    EXPECT_EQ(root.size(), 5u);
    EXPECT_TRUE(root.find("jsonrpc").string_equals("2.0"));
    EXPECT_EQ(root.find("id").as_int64(), 0);
    EXPECT_TRUE(root.find("x").is_null());
    EXPECT_FALSE(root.find("missing").valid());
    json::Value args = root.find("params").find("arguments");
    json::Value n = args.find("n");
    ASSERT_TRUE(n.is_array());
    EXPECT_EQ(n.size(), 3u);
    EXPECT_EQ(n.at(1).as_int64(), 2);
    EXPECT_EQ(n.at(2).find("deep").as_bool(), true);
    EXPECT_FALSE(n.at(3).valid());
    char buf[16];
    auto len = args.find("s").string_into(buf);
    ASSERT_TRUE(len.ok());
    EXPECT_EQ(std::string(buf, *len), "caf\xc3\xa9");
    EXPECT_TRUE(args.find("s").string_equals("caf\xc3\xa9"));
    EXPECT_FALSE(args.find("s").plain_string()) << "escaped strings have no zero-copy view";
    EXPECT_EQ(root.find("method").plain_string().value_or(""), "tools/call");
    std::vector<std::string> keys;
    for (json::Value v = root.first(); v.valid(); v = v.next_sibling()) {
        char k[16];
        auto kl = v.key_into(k);
        ASSERT_TRUE(kl.ok());
        keys.emplace_back(k, *kl);
    }
    EXPECT_EQ(keys, (std::vector<std::string> { "jsonrpc", "id", "method", "params", "x" }));
    char tiny[2];
    EXPECT_EQ(args.find("s").string_into(tiny).error(), ktl::Error::Truncated);
}

TEST(JsonValue, IntegersAreExact) {
    EXPECT_EQ(parse("9223372036854775807")->doc->root().as_int64(), INT64_MAX);
    EXPECT_EQ(parse("-9223372036854775808")->doc->root().as_int64(), INT64_MIN);
    EXPECT_FALSE(parse("9223372036854775808")->doc->root().as_int64());
    EXPECT_EQ(parse("18446744073709551615")->doc->root().as_uint64(), UINT64_MAX);
    EXPECT_FALSE(parse("18446744073709551616")->doc->root().as_uint64());
    EXPECT_FALSE(parse("1.0")->doc->root().as_int64()) << "JSON-RPC ids must be integers";
    EXPECT_FALSE(parse("1e2")->doc->root().as_int64());
    EXPECT_FALSE(parse("-1")->doc->root().as_uint64());
    EXPECT_FALSE(parse("\"1\"")->doc->root().as_int64());
}

TEST(JsonValue, DoublesMatchStrtod) {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 200000; ++i) {
        uint64_t bits = rng();
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!std::isfinite(d) || (i % 2 == 0 && !std::isfinite(float(d))))
            continue;
        char text[40];
        snprintf(text, sizeof text, i % 2 ? "%.17g" : "%.9g", i % 2 ? d : double(float(d)));
        auto p = parse(text);
        ASSERT_TRUE(p->doc.ok()) << text;
        auto v = p->doc->root().as_double();
        ASSERT_TRUE(v.has_value()) << text;
        EXPECT_EQ(*v, strtod(text, nullptr)) << text;
    }
    EXPECT_EQ(parse("5e-324")->doc->root().as_double(), 5e-324);
    EXPECT_EQ(parse("0.1")->doc->root().as_float(), 0.1f);
    EXPECT_FALSE(parse("1e39")->doc->root().as_float());
}

TEST(JsonWriter, WritesWhatTheReaderReadsBack) {
    char buf[512];
    json::Writer w(buf);
    w.begin_object()
        .key("jsonrpc")
        .string("2.0")
        .key("id")
        .number(int64_t(-7))
        .key("big")
        .number(UINT64_MAX)
        .key("pi")
        .number(3.141592653589793)
        .key("tenth")
        .number(0.1)
        .key("text")
        .string("quote \" backslash \\ newline \n tab \t ctl \x01 caf\xc3\xa9")
        .key("list")
        .begin_array()
        .boolean(true)
        .null()
        .begin_object()
        .end_object()
        .end_array()
        .end_object();
    ASSERT_TRUE(w.complete()) << ktl::error_name(w.error());
    std::string out(w.view());
    EXPECT_EQ(out.find('\n'), std::string::npos) << "one line, safe for the serial transport";
    auto p = parse(out);
    ASSERT_TRUE(p->doc.ok()) << out;
    json::Value r = p->doc->root();
    EXPECT_EQ(r.find("id").as_int64(), -7);
    EXPECT_EQ(r.find("big").as_uint64(), UINT64_MAX);
    EXPECT_EQ(r.find("pi").as_double(), 3.141592653589793);
    EXPECT_EQ(r.find("tenth").raw(), "0.1") << "shortest round-trip form";
    EXPECT_TRUE(r.find("text").string_equals("quote \" backslash \\ newline \n tab \t ctl \x01 caf\xc3\xa9"));
    EXPECT_EQ(r.find("list").size(), 3u);
}

TEST(JsonWriter, IntegersAsPrintfWritesThem) {
    const int64_t signed_values[] = { 0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
    for (int64_t v : signed_values) {
        char buf[32], want[32];
        json::Writer w(buf);
        w.number(v);
        snprintf(want, sizeof want, "%lld", static_cast<long long>(v));
        EXPECT_EQ(w.view(), std::string_view(want));
    }
    const uint64_t unsigned_values[] = { 0, 7, 10, 18446744073709551615ull, 10000000000000000000ull };
    for (uint64_t v : unsigned_values) {
        char buf[32], want[32];
        json::Writer w(buf);
        w.number(v);
        snprintf(want, sizeof want, "%llu", static_cast<unsigned long long>(v));
        EXPECT_EQ(w.view(), std::string_view(want));
    }
    char tiny[20]; // INT64_MIN is 20 characters with its sign: one short
    json::Writer w({ tiny, 19 });
    w.number(INT64_MIN);
    EXPECT_EQ(w.error(), ktl::Error::Full);
}

// Doubles: the shortest %.Ng that reads back, as a linear search over N finds it; floats: the
// shortest that reads back as the same float, never more than 9 digits.
TEST(JsonWriter, NumbersAreTheShortestThatReadBack) {
    std::mt19937_64 rng(37);
    auto linear = [](double v) {
        char buf[32];
        int n = 0;
        for (int p = 1; p <= 17; ++p) {
            n = snprintf(buf, sizeof buf, "%.*g", p, v);
            if (strtod(buf, nullptr) == v)
                break;
        }
        return std::string(buf, size_t(n));
    };
    for (int i = 0; i < 20000; ++i) {
        uint64_t bits = rng();
        double v;
        std::memcpy(&v, &bits, 8);
        if (i % 2)
            v = double(int64_t(rng() % 2000001) - 1000000) / double(1 + rng() % 10000); // everyday values
        if (!std::isfinite(v))
            continue;
        char buf[40];
        json::Writer w(buf);
        w.number(v);
        ASSERT_TRUE(w.ok());
        ASSERT_EQ(std::string(w.view()), linear(v)) << v;
    }
    for (int i = 0; i < 20000; ++i) {
        const uint32_t bits = static_cast<uint32_t>(rng());
        float f;
        std::memcpy(&f, &bits, 4);
        if (i % 2)
            f = float(int32_t(rng() % 2001) - 1000) / float(1 + rng() % 997);
        if (!std::isfinite(f))
            continue;
        char buf[40];
        json::Writer w(buf);
        w.number_f32(f);
        ASSERT_TRUE(w.ok());
        const std::string text(w.view());
        ASSERT_EQ(strtof(text.c_str(), nullptr), f) << text;
        char shorter[32];
        const int p = std::max(1, [&] {
            int best = 17;
            for (int q = 9; q >= 1; --q) {
                snprintf(shorter, sizeof shorter, "%.*g", q, double(f));
                if (strtof(shorter, nullptr) == f)
                    best = q;
            }
            return best;
        }());
        snprintf(shorter, sizeof shorter, "%.*g", p, double(f));
        EXPECT_EQ(text, std::string(shorter)) << "the shortest";
    }
    char buf[40];
    json::Writer w(buf);
    w.begin_array().number_f32(0.1f).number_f32(-2.5f).number_f32(1e-30f).end_array();
    EXPECT_EQ(w.view(), "[0.1,-2.5,1e-30]");
    json::Writer bad(buf);
    bad.number_f32(std::nanf(""));
    EXPECT_FALSE(bad.ok());
}

TEST(JsonWriter, RefusesMisuseAndOverflow) {
    char buf[64];
    {
        json::Writer w(buf);
        w.begin_object().string("no key");
        EXPECT_FALSE(w.ok());
    }
    {
        json::Writer w(buf);
        w.begin_array().end_object();
        EXPECT_FALSE(w.ok());
    }
    {
        json::Writer w(buf);
        w.number(std::nan(""));
        EXPECT_FALSE(w.ok());
    }
    {
        json::Writer w(buf);
        w.string("\xc0\xaf");
        EXPECT_FALSE(w.ok()) << "invalid UTF-8 must not reach the wire";
    }
    {
        json::Writer w(buf);
        w.null().null();
        EXPECT_FALSE(w.ok()) << "two top-level values";
    }
    {
        json::Writer w(buf);
        w.begin_array();
        for (int i = 0; i < 100; ++i)
            w.number(int64_t(123456));
        EXPECT_EQ(w.error(), ktl::Error::Full);
        EXPECT_LE(w.size(), sizeof buf);
    }
    {
        json::Writer w(buf);
        w.begin_object().key("a");
        EXPECT_FALSE(w.complete());
    }
}

TEST(JsonWriter, RandomTreesRoundTrip) {
    std::mt19937 rng(3);
    std::vector<char> buf(1 << 16);
    for (int iter = 0; iter < 300; ++iter) {
        json::Writer w(buf);
        int depth = 0, written = 0;
        std::vector<bool> is_object;
        w.begin_array();
        is_object.push_back(false);
        depth = 1;
        while (written < 60 || depth > 0) {
            int op = int(rng() % 8);
            bool in_object = is_object.back();
            if (written >= 60 || (op == 0 && depth > 0)) {
                if (in_object)
                    w.end_object();
                else
                    w.end_array();
                is_object.pop_back();
                --depth;
                if (depth == 0)
                    break;
                continue;
            }
            if (in_object)
                w.key("k" + std::to_string(written));
            ++written;
            if (op == 1 && depth < 10) {
                w.begin_object();
                is_object.push_back(true);
                ++depth;
            } else if (op == 2 && depth < 10) {
                w.begin_array();
                is_object.push_back(false);
                ++depth;
            } else if (op == 3) {
                w.number(double(int32_t(rng())) / 1024.0);
            } else if (op == 4) {
                w.string(std::string(rng() % 10, char('a' + rng() % 26)) + "\"\\\n");
            } else {
                w.number(int64_t(int32_t(rng())));
            }
        }
        ASSERT_TRUE(w.complete()) << ktl::error_name(w.error());
        auto p = parse(std::string(w.view()), 8192);
        ASSERT_TRUE(p->doc.ok()) << json::reason_name(p->error.reason) << " in " << w.view();
    }
}

TEST(JsonValue, RawOfAContainerIsItsSourceText) {
    auto p = parse(R"({"a": [1, {"b": "c"}], "e": {}, "f": []})");
    ASSERT_TRUE(p->doc.ok());
    json::Value root = p->doc->root();
    EXPECT_EQ(root.raw(), R"({"a": [1, {"b": "c"}], "e": {}, "f": []})");
    EXPECT_EQ(root.find("a").raw(), R"([1, {"b": "c"}])");
    EXPECT_EQ(root.find("a").at(1).raw(), R"({"b": "c"})");
    EXPECT_EQ(root.find("e").raw(), "{}");
    EXPECT_EQ(root.find("f").raw(), "[]");
}

// Found by tests/fuzz/dispatcher_fuzz: a client response whose result was a string reached the
// host as the string's body without its quotes, text that does not parse back.
TEST(JsonValue, JsonTextOfEveryKindReparsesToTheSameValue) {
    auto p = parse(R"({"s": "a\"b", "e": "", "n": -1.5e3, "t": true, "z": null, "a": [1, "x"], "o": {"k": "v"}})");
    ASSERT_TRUE(p->doc.ok());
    json::Value root = p->doc->root();
    EXPECT_EQ(root.find("s").json_text(), R"("a\"b")");
    EXPECT_EQ(root.find("s").raw(), R"(a\"b)");
    EXPECT_EQ(root.find("e").json_text(), R"("")");
    EXPECT_EQ(root.find("n").json_text(), "-1.5e3");
    EXPECT_EQ(root.find("t").json_text(), "true");
    EXPECT_EQ(root.find("z").json_text(), "null");
    EXPECT_EQ(root.find("a").json_text(), R"([1, "x"])");
    EXPECT_EQ(root.find("a").at(1).json_text(), R"("x")");
    EXPECT_EQ(root.find("o").json_text(), R"({"k": "v"})");
    EXPECT_EQ(root.json_text(), root.raw());
    for (const char* key : { "s", "e", "n", "t", "z", "a", "o" }) {
        std::string text(root.find(key).json_text());
        auto again = parse(text);
        ASSERT_TRUE(again->doc.ok()) << key << ": " << text;
        EXPECT_EQ(again->doc->root().type(), root.find(key).type()) << key;
    }
    EXPECT_EQ(json::Value().json_text(), "");
}

// Found by tests/fuzz/json_fuzz: with max_number raised past 79, the reader accepted longer
// literals that as_double() (an 80-byte conversion buffer) then refused, valid as they were.
TEST(JsonParse, NumberLiteralsHaveAHardCeilingWhateverMaxNumberSays) {
    json::Limits l;
    l.max_number = 1000;
    std::string at_ceiling = "0." + std::string(json::kMaxNumberLiteral - 3, '0') + "1";
    ASSERT_EQ(at_ceiling.size(), json::kMaxNumberLiteral);
    auto ok = parse("[" + at_ceiling + "]", 4, l);
    ASSERT_TRUE(ok->doc.ok());
    auto d = ok->doc->root().at(0).as_double();
    ASSERT_TRUE(d.has_value()) << "every literal the reader accepts converts";
    EXPECT_EQ(*d, strtod(at_ceiling.c_str(), nullptr));
    auto over = parse("[" + at_ceiling + "1]", 4, l);
    EXPECT_EQ(over->error.reason, json::Reason::TooLong);
    EXPECT_EQ(over->error.offset, 1u);
}

TEST(JsonParse, DuplicateKeysAreFoundThroughEscapesAndHashes) {
    EXPECT_EQ(parse(R"({"a":1,"\u0061":2})")->error.reason, json::Reason::DuplicateKey);
    EXPECT_EQ(parse(R"({"é":1,"\u00e9":2})")->error.reason, json::Reason::DuplicateKey);
    EXPECT_EQ(parse(R"({"ab":1,"a\u0062":2})")->error.reason, json::Reason::DuplicateKey);
    EXPECT_TRUE(parse(R"({"a":1,"b":2,"\u0063":3})")->doc.ok());
    // Many long escaped keys that differ only at the end: all distinct, all accepted.
    std::string text = "{";
    for (int i = 0; i < 1000; ++i) {
        if (i)
            text += ",";
        text += "\"";
        for (int k = 0; k < 140; ++k) // ~0.85 MiB in all, under max_input
            text += "\\u0041";
        text += std::to_string(i) + "\":" + std::to_string(i);
    }
    text += "}";
    json::Limits limits;
    limits.max_members = 1000;
    auto p = parse(text, 4096, limits);
    ASSERT_TRUE(p->doc.ok()) << json::reason_name(p->error.reason);
    EXPECT_EQ(p->doc->root().size(), 1000u);
    EXPECT_EQ(p->doc->root().at(999).as_int64(), 999);
}

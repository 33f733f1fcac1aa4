// Field-value helpers for the MCP transport checks: Accept (q=0, wildcards, specificity),
// Content-Type, Bearer credentials, Host and Origin syntax, and the DNS-rebinding allowlist.
#include <http/fields.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::vector<std::string> elements(std::string_view list, char separator = ',') {
    std::vector<std::string> out;
    http::ListReader reader(list, separator);
    while (auto e = reader.next())
        out.emplace_back(*e);
    return out;
}

} // namespace

TEST(HttpFields, TokenEqualsIgnoresAsciiCaseOnly) {
    EXPECT_TRUE(http::token_equals_ci("Keep-Alive", "keep-alive"));
    EXPECT_TRUE(http::token_equals_ci("", ""));
    EXPECT_FALSE(http::token_equals_ci("close", "closed"));
    EXPECT_FALSE(http::token_equals_ci("\xc3\x89", "\xc3\xa9")); // no Unicode folding
    EXPECT_FALSE(http::token_equals_ci("[", "{"));               // 0x5b and 0x7b differ by 0x20 too
}

TEST(HttpFields, ListReaderSplitsTrimsAndSkipsEmptyElements) {
    EXPECT_EQ(elements("a, b ,\tc"), (std::vector<std::string> { "a", "b", "c" }));
    EXPECT_EQ(elements(",, a ,,b,"), (std::vector<std::string> { "a", "b" }));
    EXPECT_EQ(elements(""), std::vector<std::string> {});
    EXPECT_EQ(elements(" , "), std::vector<std::string> {});
    EXPECT_EQ(elements("a;x=\"1,2\", b"), (std::vector<std::string> { "a;x=\"1,2\"", "b" }));
    EXPECT_EQ(elements("a;x=\"\\\",\", b"), (std::vector<std::string> { "a;x=\"\\\",\"", "b" }));
    EXPECT_EQ(elements("\"unterminated, x"), (std::vector<std::string> { "\"unterminated, x" }));
    EXPECT_EQ(elements("text/html; q=0.5 ;level=1", ';'),
              (std::vector<std::string> { "text/html", "q=0.5", "level=1" }));
}

TEST(HttpFields, ListContains) {
    EXPECT_TRUE(http::list_contains("Keep-Alive, Upgrade", "upgrade"));
    EXPECT_TRUE(http::list_contains("close", "CLOSE"));
    EXPECT_FALSE(http::list_contains("closed, x-close", "close"));
    EXPECT_FALSE(http::list_contains("", "close"));
}

namespace {

constexpr const char* kJson = "application/json";
constexpr const char* kSse = "text/event-stream";

struct AcceptCase {
    const char* accept;
    const char* type;
    bool acceptable;
};

void expect_accepts(std::initializer_list<AcceptCase> cases) {
    for (const auto& c : cases)
        EXPECT_EQ(http::accepts(c.accept, c.type), c.acceptable) << "Accept: " << c.accept << " for " << c.type;
}

} // namespace

TEST(HttpFields, AcceptsExactTypesAndWildcards) {
    expect_accepts({
        { "application/json, text/event-stream", kSse, true },
        { "application/json, text/event-stream", kJson, true },
        { "APPLICATION/JSON", kJson, true },
        { "*/*", kJson, true },
        { "text/*", kSse, true },
        { "application/json; charset=utf-8; q=0.9", kJson, true },
        { "text/*", kJson, false },
        { "application/json", kSse, false },
        { "text/html", "text/htm", false },
        { "", kJson, false },
    });
}

TEST(HttpFields, QZeroMeansNotAcceptable) {
    expect_accepts({
        { "application/json;q=0", kJson, false },
        { "application/json; Q=0.000", kJson, false },
        { "application/json;q=0.001", kJson, true },
        { "application/json;q=1.000", kJson, true },
        // The most specific range decides, in either order.
        { "*/*, application/json;q=0", kJson, false },
        { "application/json;q=0, */*", kJson, false },
        { "*/*;q=0, application/json", kJson, true },
        { "text/*;q=0, text/event-stream", kSse, true },
        { "text/*;q=0, */*", kSse, false },
        { "*/*;q=0, text/*;q=0.1", kSse, true },
    });
}

TEST(HttpFields, SkipsMalformedAcceptElements) {
    expect_accepts({
        { "application/json;q=2", kJson, false },
        { "application/json;q=1.5", kJson, false },
        { "application/json;q=0.0001", kJson, false },
        { "application/json;q=abc", kJson, false },
        { "*/json", kJson, false },
        { "application", kJson, false },
        { "application/json/x", kJson, false },
        { "appli cation/json", kJson, false },
        // A malformed element does not hide a good one.
        { "garbage, application/json", kJson, true },
        { "application/json;q=9, */*;q=0.1", kJson, true },
    });
}

TEST(HttpFields, MediaTypeIgnoresParametersAndCase) {
    EXPECT_TRUE(http::media_type_is("application/json", "application/json"));
    EXPECT_TRUE(http::media_type_is("Application/JSON; charset=utf-8", "application/json"));
    EXPECT_TRUE(http::media_type_is("application/json ;charset=\"utf-8\"", "application/json"));
    EXPECT_FALSE(http::media_type_is("application/jsonx", "application/json"));
    EXPECT_FALSE(http::media_type_is("application/json-seq", "application/json"));
    EXPECT_FALSE(http::media_type_is("text/plain; x=application/json", "application/json"));
    EXPECT_FALSE(http::media_type_is("", "application/json"));
}

TEST(HttpFields, BearerToken) {
    EXPECT_EQ(http::bearer_token("Bearer abc.DEF-123_~+/=="), "abc.DEF-123_~+/==");
    EXPECT_EQ(http::bearer_token("bearer   tok"), "tok");
    EXPECT_EQ(http::bearer_token("BEARER tok"), "tok");
    const char* refused[] = {
        "Bearer",      "Bearer ",     "Bearertok",  "Bearer\ttok", "Basic dXNlcjpwYXNz", "Bearer a b", "Bearer a=b",
        "Bearer =abc", "Bearer tok ", "Bearer t,k", "Bearer t\"k", "Bearer tök",         "Bear tok",   "",
    };
    for (const char* r : refused)
        EXPECT_FALSE(http::bearer_token(r).has_value()) << r;
}

TEST(HttpFields, ParsesHostsWithAndWithoutPorts) {
    struct {
        const char *value, *host;
        uint16_t port;
        bool has_port;
    } cases[] = {
        { "localhost", "localhost", 0, false },
        { "localhost:8080", "localhost", 8080, true },
        { "127.0.0.1:0", "127.0.0.1", 0, true },
        { "example.com:65535", "example.com", 65535, true },
        { "a-b_c~d.example", "a-b_c~d.example", 0, false },
        { "xn--caf-dma.example:080", "xn--caf-dma.example", 80, true },
        { "%41bc", "%41bc", 0, false },
        { "255.255.255.255", "255.255.255.255", 0, false },
        { "0.0.0.0", "0.0.0.0", 0, false },
        { "[::1]", "[::1]", 0, false },
        { "[::1]:3000", "[::1]", 3000, true },
        { "[::]", "[::]", 0, false },
        { "[2001:db8::8a2e:370:7334]", "[2001:db8::8a2e:370:7334]", 0, false },
        { "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8]", 0, false },
        { "[1:2:3:4:5:6:7::]", "[1:2:3:4:5:6:7::]", 0, false },
        { "[::ffff:192.0.2.1]:443", "[::ffff:192.0.2.1]", 443, true },
        { "[FE80::1]", "[FE80::1]", 0, false },
    };
    for (const auto& c : cases) {
        auto hp = http::parse_host(c.value);
        ASSERT_TRUE(hp.has_value()) << c.value;
        EXPECT_EQ(hp->host, c.host) << c.value;
        EXPECT_EQ(hp->port, c.port) << c.value;
        EXPECT_EQ(hp->has_port, c.has_port) << c.value;
    }
}

TEST(HttpFields, RefusesBadHosts) {
    const char* refused[] = {
        "",
        ":80",
        "localhost:",
        "localhost:65536",
        "localhost:99999999999999999999",
        "localhost:-1",
        "localhost:8a",
        "localhost:80:80",
        "user@localhost",
        "user:pw@localhost",
        "local host",
        "a/b",
        "a?b",
        "%4",
        "%zz",
        "256.0.0.1",
        "1.2.3",
        "127.1",
        "0177.0.0.1",
        "1.2.3.4.5",
        "123",
        "1..2.3",
        "[::1",
        "::1",
        "[::1]x",
        "[::1]:",
        "[::1]:65536",
        "[]",
        "[:::]",
        "[1::2::3]",
        "[1:2:3:4:5:6:7:8:9]",
        "[1:2:3:4:5:6:7]",
        "[1:2:3:4:5:6:7:8::]",
        "[12345::]",
        "[:1]",
        "[1:]",
        "[fe80::1%25eth0]",
        "[v1.fe]",
        "[::1.2.3]",
        "[1.2.3.4]",
        "[::g]",
        "localhost\t",
    };
    for (const char* r : refused)
        EXPECT_FALSE(http::parse_host(r).has_value()) << r;
}

TEST(HttpFields, ParsesOrigins) {
    auto a = http::parse_origin("http://localhost:6274");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "localhost");
    EXPECT_EQ(a->port, 6274);
    EXPECT_TRUE(a->has_port);
    auto b = http::parse_origin("HTTPS://Example.COM");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->host, "Example.COM");
    EXPECT_EQ(b->port, 443);
    EXPECT_FALSE(b->has_port);
    auto c = http::parse_origin("http://[::1]");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->host, "[::1]");
    EXPECT_EQ(c->port, 80);
    const char* refused[] = {
        "null",
        "",
        "localhost",
        "ftp://h",
        "http://",
        "http://h/",
        "http://h:65536",
        "http:/h",
        "//h",
        "http://u@h",
        "file://",
        "http://h/path",
        "chrome-extension://abc",
    };
    for (const char* r : refused)
        EXPECT_FALSE(http::parse_origin(r).has_value()) << r;
}

TEST(HttpFields, HostAllowlistIsTheDnsRebindingGuard) {
    const std::string_view allow[] = { "localhost", "127.0.0.1", "[::1]" };
    EXPECT_TRUE(http::host_allowed("localhost", allow));
    EXPECT_TRUE(http::host_allowed("LocalHost:8080", allow));
    EXPECT_TRUE(http::host_allowed("127.0.0.1:80", allow));
    EXPECT_TRUE(http::host_allowed("[::1]:8080", allow));
    EXPECT_FALSE(http::host_allowed("evil.example", allow));
    EXPECT_FALSE(http::host_allowed("localhost.evil.example", allow));
    EXPECT_FALSE(http::host_allowed("localhost.", allow));
    EXPECT_FALSE(http::host_allowed("127.0.0.2", allow));
    EXPECT_FALSE(http::host_allowed("127.1", allow));
    EXPECT_FALSE(http::host_allowed("[0:0:0:0:0:0:0:1]", allow)); // textual, documented
    EXPECT_FALSE(http::host_allowed("localhost:99999", allow));   // not a valid Host at all
    EXPECT_FALSE(http::host_allowed("", allow));
    // An IPv6 entry may be written without brackets.
    const std::string_view bare[] = { "::1" };
    EXPECT_TRUE(http::host_allowed("[::1]:3000", bare));
    EXPECT_FALSE(http::host_allowed("localhost", bare));
    EXPECT_FALSE(http::host_allowed("localhost", std::span<const std::string_view> {}));
}

// HTTP/1.1 request-head reader: every refusal with its status, each limit exactly at and one
// past its boundary (and refused before the head ends), feeding in pieces, pipelining,
// persistence and the request-smuggling shapes.
#include <http/request.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

using http::Parse;

struct Parsed {
    std::string data; // the Head views into it
    http::Head head;
    http::ParseResult result;
};

std::unique_ptr<Parsed> parse(std::string data, http::Limits limits = {}) {
    auto p = std::make_unique<Parsed>();
    p->data = std::move(data);
    p->result = http::parse_head(p->data, limits, p->head);
    return p;
}

// A request line and fields, each ended with CRLF, and the empty line.
std::string request(std::string line, std::string fields = "Host: localhost\r\n") {
    return line + "\r\n" + fields + "\r\n";
}

std::string get_with(std::string fields) { return request("GET / HTTP/1.1", std::move(fields)); }

uint16_t status_of(const std::string& data, http::Limits limits = {}) {
    auto p = parse(data, limits);
    return p->result.status == Parse::Error ? p->result.http_status : 0;
}

struct Refusal {
    const char* what;
    std::string data;
    uint16_t status;
};

void expect_refusals(std::initializer_list<Refusal> cases) {
    for (const auto& c : cases) {
        auto p = parse(c.data);
        EXPECT_EQ(p->result.status, Parse::Error) << c.what;
        EXPECT_EQ(p->result.http_status, c.status) << c.what;
        EXPECT_STRNE(p->result.reason, "") << c.what;
    }
}

} // namespace

TEST(HttpRequest, ParsesAMinimalGet) {
    auto p = parse("GET /mcp HTTP/1.1\r\nHost: localhost:8080\r\nAccept: text/event-stream\r\n\r\n");
    ASSERT_EQ(p->result.status, Parse::Complete) << p->result.reason;
    const auto& h = p->head;
    EXPECT_EQ(h.method, http::Method::Get);
    EXPECT_EQ(h.method_text, "GET");
    EXPECT_EQ(h.target, "/mcp");
    EXPECT_EQ(h.path, "/mcp");
    EXPECT_EQ(h.query, "");
    EXPECT_EQ(h.minor, 1);
    EXPECT_EQ(h.authority, "localhost:8080");
    ASSERT_EQ(h.header_count, 2u);
    EXPECT_EQ(h.headers[0].name, "Host");
    EXPECT_EQ(h.headers[1].value, "text/event-stream");
    EXPECT_EQ(h.head_bytes, p->data.size());
    EXPECT_FALSE(h.has_content_length);
    EXPECT_EQ(h.content_length, 0u);
    EXPECT_TRUE(h.keep_alive);
}

TEST(HttpRequest, MapsMethodsCaseSensitively) {
    struct {
        const char* text;
        http::Method method;
    } cases[] = {
        { "GET", http::Method::Get },         { "HEAD", http::Method::Head },     { "POST", http::Method::Post },
        { "PUT", http::Method::Put },         { "DELETE", http::Method::Delete }, { "OPTIONS", http::Method::Options },
        { "PATCH", http::Method::Patch },     { "get", http::Method::Other },     { "PROPFIND", http::Method::Other },
        { "X-Custom!", http::Method::Other },
    };
    for (const auto& c : cases) {
        auto p = parse(request(std::string(c.text) + " / HTTP/1.1"));
        ASSERT_EQ(p->result.status, Parse::Complete) << c.text;
        EXPECT_EQ(p->head.method, c.method) << c.text;
        EXPECT_EQ(p->head.method_text, c.text);
    }
}

TEST(HttpRequest, SplitsPathAndQuery) {
    auto p = parse(request("POST /mcp?session=1&x=%20 HTTP/1.1"));
    ASSERT_EQ(p->result.status, Parse::Complete);
    EXPECT_EQ(p->head.path, "/mcp");
    EXPECT_EQ(p->head.query, "session=1&x=%20");
    auto q = parse(request("GET /a?b?c HTTP/1.1"));
    EXPECT_EQ(q->head.path, "/a");
    EXPECT_EQ(q->head.query, "b?c");
}

TEST(HttpRequest, AbsoluteFormTakesPathAndAuthorityFromTheTarget) {
    auto p = parse(request("POST http://127.0.0.1:8080/mcp?x=1 HTTP/1.1", "Host: evil.example\r\n"));
    ASSERT_EQ(p->result.status, Parse::Complete) << p->result.reason;
    EXPECT_EQ(p->head.target, "http://127.0.0.1:8080/mcp?x=1");
    EXPECT_EQ(p->head.path, "/mcp");
    EXPECT_EQ(p->head.query, "x=1");
    EXPECT_EQ(p->head.authority, "127.0.0.1:8080"); // RFC 9112 3.2.2: not the Host field
    auto bare = parse(request("GET HTTPS://[::1] HTTP/1.1"));
    ASSERT_EQ(bare->result.status, Parse::Complete);
    EXPECT_EQ(bare->head.path, "/");
    EXPECT_EQ(bare->head.authority, "[::1]");
    auto query_only = parse(request("GET http://h?q=1 HTTP/1.1"));
    EXPECT_EQ(query_only->head.path, "/");
    EXPECT_EQ(query_only->head.query, "q=1");
    expect_refusals({
        { "other scheme", request("GET ftp://h/ HTTP/1.1"), 400 },
        { "userinfo", request("GET http://user@h/ HTTP/1.1"), 400 },
        { "no host", request("GET http:///x HTTP/1.1"), 400 },
        { "bad port", request("GET http://h:65536/ HTTP/1.1"), 400 },
    });
}

TEST(HttpRequest, AsteriskFormOnlyForOptions) {
    auto p = parse(request("OPTIONS * HTTP/1.1"));
    ASSERT_EQ(p->result.status, Parse::Complete);
    EXPECT_EQ(p->head.path, "*");
    EXPECT_EQ(status_of(request("GET * HTTP/1.1")), 400);
}

TEST(HttpRequest, RefusesMalformedRequestLines) {
    expect_refusals({
        { "no method", request(" / HTTP/1.1"), 400 },
        { "separator in method", request("G(T / HTTP/1.1"), 400 },
        { "tab separator", request("GET\t/ HTTP/1.1"), 400 },
        { "two spaces", request("GET  / HTTP/1.1"), 400 },
        { "HTTP/0.9 shape", request("GET /"), 400 },
        { "trailing space", request("GET / HTTP/1.1 "), 400 },
        { "lowercase version", request("GET / http/1.1"), 400 },
        { "version with letters", request("GET / HTTP/1.x"), 400 },
        { "two-digit version", request("GET / HTTP/11"), 400 },
        { "long version", request("GET / HTTP/1.10"), 400 },
        { "relative target", request("GET mcp HTTP/1.1"), 400 },
        { "authority-form", request("CONNECT localhost:80 HTTP/1.1"), 400 },
        { "NUL in target", request(std::string("GET /a\0b HTTP/1.1", 17)), 400 },
        { "control in target", request("GET /a\x01 HTTP/1.1"), 400 },
        { "DEL in target", request("GET /a\x7f HTTP/1.1"), 400 },
        { "non-ASCII target", request("GET /\xc3\xa9 HTTP/1.1"), 400 },
        { "fragment", request("GET /a#b HTTP/1.1"), 400 },
        { "bare CR in request line", "GET / HTTP/1.1\rHost: x\r\n\r\n", 400 },
    });
}

TEST(HttpRequest, SkipsEmptyLinesBeforeTheRequestLine) {
    // RFC 9112 2.2: a CRLF left after a previous body is not a request.
    auto p = parse("\r\n\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_EQ(p->result.status, Parse::Complete);
    EXPECT_EQ(p->head.target, "/");
    EXPECT_EQ(p->head.head_bytes, p->data.size());
    EXPECT_EQ(parse("\r\n\r\n")->result.status, Parse::NeedMore);
}

TEST(HttpRequest, AnswersOtherVersionsWith505) {
    for (const char* v : { "HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "HTTP/3.0", "HTTP/9.9" })
        EXPECT_EQ(status_of(request(std::string("GET / ") + v)), 505) << v;
    auto p = parse(request("GET / HTTP/1.0", ""));
    ASSERT_EQ(p->result.status, Parse::Complete);
    EXPECT_EQ(p->head.minor, 0);
}

TEST(HttpRequest, RefusesMalformedFieldLines) {
    expect_refusals({
        { "space before colon", get_with("Host : x\r\n"), 400 },
        { "tab before colon", get_with("Host: x\r\nX\t: y\r\n"), 400 },
        { "obs-fold", get_with("Host: x\r\nX: a\r\n  b\r\n"), 400 },
        { "whitespace after request line", get_with(" Host: x\r\n"), 400 },
        { "tab-folded", get_with("Host: x\r\nX: a\r\n\tb\r\n"), 400 },
        { "empty name", get_with("Host: x\r\n: v\r\n"), 400 },
        { "space in name", get_with("Host: x\r\nX Y: v\r\n"), 400 },
        { "separator in name", get_with("Host: x\r\nX@: v\r\n"), 400 },
        { "no colon", get_with("Host: x\r\nXY\r\n"), 400 },
        { "NUL in value", get_with(std::string("Host: x\r\nX: a\0b\r\n", 18)), 400 },
        { "control in value", get_with("Host: x\r\nX: a\x01\r\n"), 400 },
        { "DEL in value", get_with("Host: x\r\nX: a\x7f\r\n"), 400 },
        { "bare CR in value", get_with("Host: x\r\nX: a\rb\r\n"), 400 },
        { "bare CR line", get_with("Host: x\r\n\rX: y\r\n"), 400 },
    });
}

TEST(HttpRequest, ChecksHost) {
    expect_refusals({
        { "1.1 without Host", get_with(""), 400 },
        { "two Host lines", get_with("Host: a\r\nhost: a\r\n"), 400 },
        { "empty Host", get_with("Host:\r\n"), 400 },
        { "Host with space", get_with("Host: a b\r\n"), 400 },
        { "Host with userinfo", get_with("Host: u@a\r\n"), 400 },
        { "Host with big port", get_with("Host: a:65536\r\n"), 400 },
        { "Host with path", get_with("Host: a/b\r\n"), 400 },
    });
    auto ten = parse(request("GET / HTTP/1.0", "Host: [::1]:80\r\n"));
    ASSERT_EQ(ten->result.status, Parse::Complete);
    EXPECT_EQ(ten->head.authority, "[::1]:80");
}

TEST(HttpRequest, ReadsContentLength) {
    auto p = parse(request("POST /mcp HTTP/1.1", "Host: x\r\nContent-Length: 005\r\n"));
    ASSERT_EQ(p->result.status, Parse::Complete);
    EXPECT_TRUE(p->head.has_content_length);
    EXPECT_EQ(p->head.content_length, 5u);
    // RFC 9110 8.6: identical values, in one list or repeated, are one length.
    auto list = parse(request("POST / HTTP/1.1", "Host: x\r\nContent-Length: 7, 7\r\ncontent-length: 7\r\n"));
    ASSERT_EQ(list->result.status, Parse::Complete) << list->result.reason;
    EXPECT_EQ(list->head.content_length, 7u);
    auto zero = parse(request("POST / HTTP/1.1", "Host: x\r\nContent-Length: 0\r\n"));
    ASSERT_EQ(zero->result.status, Parse::Complete);
    EXPECT_TRUE(zero->head.has_content_length);
}

TEST(HttpRequest, RefusesAmbiguousBodyFraming) {
    auto with = [](const char* fields) { return request("POST / HTTP/1.1", std::string("Host: x\r\n") + fields); };
    expect_refusals({
        { "plus sign", with("Content-Length: +5\r\n"), 400 },
        { "minus sign", with("Content-Length: -1\r\n"), 400 },
        { "two numbers", with("Content-Length:  5 5\r\n"), 400 },
        { "hex", with("Content-Length: 0x5\r\n"), 400 },
        { "trailing letter", with("Content-Length: 5a\r\n"), 400 },
        { "empty", with("Content-Length:\r\n"), 400 },
        { "differing list", with("Content-Length: 5, 6\r\n"), 400 },
        { "differing fields", with("Content-Length: 5\r\nContent-Length: 6\r\n"), 400 },
        { "overflow", with("Content-Length: 18446744073709551616\r\n"), 400 },
        { "CL then TE", with("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), 400 },
        { "TE then CL", with("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"), 400 },
        { "TE alone", with("Transfer-Encoding: chunked\r\n"), 501 },
        { "TE identity", with("transfer-encoding: identity\r\n"), 501 },
    });
    auto max = parse(request("POST / HTTP/1.1", "Host: x\r\nContent-Length: 18446744073709551615\r\n"));
    EXPECT_EQ(max->result.http_status, 413); // the largest number is still a number
}

TEST(HttpRequest, BodyLimitAtAndPastTheBoundary) {
    http::Limits limits;
    limits.max_body = 100;
    EXPECT_EQ(status_of(request("POST / HTTP/1.1", "Host: x\r\nContent-Length: 100\r\n"), limits), 0);
    EXPECT_EQ(status_of(request("POST / HTTP/1.1", "Host: x\r\nContent-Length: 101\r\n"), limits), 413);
}

TEST(HttpRequest, RequestLineLimitAtAndPastTheBoundary) {
    http::Limits limits;
    limits.max_request_line = 32;
    // "GET /" + n + " HTTP/1.1" is 14 + n bytes.
    std::string at = "GET /" + std::string(18, 'a') + " HTTP/1.1";
    std::string past = "GET /" + std::string(19, 'a') + " HTTP/1.1";
    ASSERT_EQ(at.size(), 32u);
    EXPECT_EQ(status_of(request(at), limits), 0);
    EXPECT_EQ(status_of(request(past), limits), 414);
    EXPECT_EQ(status_of(at + "\nHost: x\n\n", limits), 0); // bare LF: the CR is not content
    // Refused before the line ends, as soon as the 33rd content byte arrives.
    EXPECT_EQ(status_of(past.substr(0, 33), limits), 414);
    EXPECT_EQ(parse(past.substr(0, 32), limits)->result.status, Parse::NeedMore);
    EXPECT_EQ(parse(at + "\r", limits)->result.status, Parse::NeedMore); // the CR may end it
    EXPECT_EQ(status_of(at + "\rX", limits), 414);                       // it did not
    EXPECT_EQ(status_of(std::string(40, 'G'), limits), 414);             // no separator ever
}

TEST(HttpRequest, HeadLimitAtAndPastTheBoundary) {
    std::string head = get_with("Host: x\r\nX: " + std::string(20, 'v') + "\r\n");
    http::Limits limits;
    limits.max_header_bytes = head.size();
    EXPECT_EQ(status_of(head, limits), 0);
    limits.max_header_bytes = head.size() - 1;
    auto p = parse(head, limits);
    EXPECT_EQ(p->result.http_status, 431);
    // Refused from a prefix as long as the limit, without waiting for the empty line.
    limits.max_header_bytes = 40;
    std::string endless = "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(100, 'v');
    EXPECT_EQ(parse(endless.substr(0, 39), limits)->result.status, Parse::NeedMore);
    EXPECT_EQ(status_of(endless.substr(0, 40), limits), 431);
    EXPECT_EQ(status_of(endless, limits), 431);
    // A request line longer than the whole head allows is a head too large.
    limits.max_header_bytes = 10;
    EXPECT_EQ(status_of("GET /abcdefgh", limits), 431);
}

TEST(HttpRequest, HeaderCountAtAndPastTheBoundary) {
    auto fields = [](size_t n) {
        std::string f = "Host: x\r\n";
        for (size_t i = 1; i < n; ++i)
            f += "X-" + std::to_string(i) + ": v\r\n";
        return f;
    };
    http::Limits limits;
    limits.max_headers = 5;
    EXPECT_EQ(status_of(get_with(fields(5)), limits), 0);
    EXPECT_EQ(status_of(get_with(fields(6)), limits), 431);
    // The sixth line is refused from its first byte.
    EXPECT_EQ(status_of("GET / HTTP/1.1\r\n" + fields(5) + "X", limits), 431);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\n" + fields(5) + "\r", limits)->result.status, Parse::NeedMore);
    // Head holds at most kMaxHeaders whatever the limits say.
    limits.max_headers = 1000;
    auto full = parse(get_with(fields(http::kMaxHeaders)), limits);
    ASSERT_EQ(full->result.status, Parse::Complete);
    EXPECT_EQ(full->head.header_count, http::kMaxHeaders);
    EXPECT_EQ(status_of(get_with(fields(http::kMaxHeaders + 1)), limits), 431);
}

TEST(HttpRequest, LooksUpFieldsCaseInsensitively) {
    auto p = parse(
        request("POST /mcp HTTP/1.1",
                "Host: x\r\nContent-Type:   application/json \t\r\nMcp-Session-Id: a\r\nmcp-session-id: b\r\n"
                "X-Empty:\r\nX-Latin: caf\xe9\r\n"));
    ASSERT_EQ(p->result.status, Parse::Complete) << p->result.reason;
    EXPECT_EQ(p->head.header("content-TYPE"), "application/json");
    EXPECT_EQ(p->head.header("MCP-SESSION-ID"), "a"); // the first occurrence
    EXPECT_EQ(p->head.header("X-Empty"), "");
    EXPECT_EQ(p->head.header("X-Latin"), "caf\xe9"); // obs-text is allowed, not interpreted
    EXPECT_FALSE(p->head.header("Authorization").has_value());
    EXPECT_FALSE(p->head.header("Content-Typ").has_value());
}

TEST(HttpRequest, KeepAliveRules) {
    struct {
        std::string line, fields;
        bool keep;
    } cases[] = {
        { "GET / HTTP/1.1", "Host: x\r\n", true },
        { "GET / HTTP/1.1", "Host: x\r\nConnection: close\r\n", false },
        { "GET / HTTP/1.1", "Host: x\r\nConnection: Keep-Alive, CLOSE\r\n", false },
        { "GET / HTTP/1.1", "Host: x\r\nConnection: closed\r\n", true },
        { "GET / HTTP/1.0", "", false },
        { "GET / HTTP/1.0", "Connection: keep-alive\r\n", true },
        { "GET / HTTP/1.0", "Connection: upgrade\r\nConnection: KEEP-ALIVE\r\n", true },
        { "GET / HTTP/1.0", "Connection: keep-alive\r\nConnection: close\r\n", false },
    };
    for (const auto& c : cases) {
        auto p = parse(request(c.line, c.fields));
        ASSERT_EQ(p->result.status, Parse::Complete) << c.fields;
        EXPECT_EQ(p->head.keep_alive, c.keep) << c.line << " " << c.fields;
    }
}

TEST(HttpRequest, AcceptsBareLineFeeds) {
    auto p = parse("GET /x HTTP/1.1\nHost: a\r\nAccept: */*\n\n");
    ASSERT_EQ(p->result.status, Parse::Complete) << p->result.reason;
    EXPECT_EQ(p->head.header("Host"), "a");
    EXPECT_EQ(p->head.header("Accept"), "*/*");
    EXPECT_EQ(p->head.head_bytes, p->data.size());
}

TEST(HttpRequest, FindsTheBodyAndAPipelinedRequest) {
    std::string first = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n";
    std::string data = first + "{\"id\":1}\r\nabc" + "\r\nGET /mcp HTTP/1.1\r\nHost: x\r\n\r\nrest";
    auto p = parse(data);
    ASSERT_EQ(p->result.status, Parse::Complete);
    EXPECT_EQ(p->head.head_bytes, first.size());
    EXPECT_EQ(p->data.substr(p->head.head_bytes, p->head.content_length), "{\"id\":1}\r\nabc");
    auto next = parse(p->data.substr(p->head.head_bytes + p->head.content_length));
    ASSERT_EQ(next->result.status, Parse::Complete);
    EXPECT_EQ(next->head.method, http::Method::Get);
    EXPECT_EQ(next->data.substr(next->head.head_bytes), "rest");
}

namespace {

// Feeding a buffer that grows one byte at a time: every prefix is NeedMore until the verdict,
// and the verdict and the Head (views included) are exactly the one-shot ones.
void expect_incremental_matches(const std::string& data, http::Limits limits = {}) {
    http::Head whole;
    auto want = http::parse_head(data, limits, whole);
    for (size_t n = 0; n <= data.size(); ++n) {
        http::Head part;
        auto got = http::parse_head(std::string_view(data).substr(0, n), limits, part);
        if (got.status == Parse::NeedMore) {
            ASSERT_NE(n, data.size()) << "never decided: " << data;
            continue;
        }
        ASSERT_EQ(got.status, want.status) << "at " << n << ": " << data;
        ASSERT_EQ(got.http_status, want.http_status) << data;
        ASSERT_STREQ(got.reason, want.reason) << data;
        if (got.status == Parse::Complete) {
            EXPECT_EQ(part.head_bytes, whole.head_bytes);
            EXPECT_EQ(part.method, whole.method);
            EXPECT_EQ(part.target.data(), whole.target.data());
            EXPECT_EQ(part.path, whole.path);
            EXPECT_EQ(part.query, whole.query);
            EXPECT_EQ(part.authority.data(), whole.authority.data());
            EXPECT_EQ(part.minor, whole.minor);
            EXPECT_EQ(part.keep_alive, whole.keep_alive);
            EXPECT_EQ(part.content_length, whole.content_length);
            ASSERT_EQ(part.header_count, whole.header_count);
            for (size_t i = 0; i < part.header_count; ++i) {
                EXPECT_EQ(part.headers[i].name.data(), whole.headers[i].name.data());
                EXPECT_EQ(part.headers[i].value, whole.headers[i].value);
            }
        }
        return;
    }
}

} // namespace

TEST(HttpRequest, ByteByByteGivesTheOneShotResult) {
    http::Limits small;
    small.max_request_line = 20;
    small.max_header_bytes = 60;
    small.max_headers = 2;
    const std::string cases[] = {
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        "GET /mcp?x=1 HTTP/1.1\nHost: [::1]:8080\nAccept: text/event-stream\n\n",
        "\r\nDELETE /mcp HTTP/1.0\r\nMcp-Session-Id: abc\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nA: 111111111111111111111111111111111\r\n\r\n",
        "GET /12345678901234\r\rX HTTP/1.1\r\n\r\n",
    };
    for (const auto& c : cases) {
        expect_incremental_matches(c);
        expect_incremental_matches(c, small);
    }
}

TEST(HttpRequest, LimitsThatMeetAtACarriageReturnDecideWithoutTheNextByte) {
    // The 33rd byte is a CR: content if a non-LF follows (414), the terminator otherwise; but
    // the head limit of 33 bytes is passed either way, so the prefix already says 431.
    http::Limits limits;
    limits.max_request_line = 32;
    limits.max_header_bytes = 33;
    std::string at = "GET /" + std::string(18, 'a') + " HTTP/1.1";
    EXPECT_EQ(status_of(at + "\r", limits), 431);
    EXPECT_EQ(status_of(at + "\rX", limits), 431);
    EXPECT_EQ(status_of(at + "\r\n", limits), 431);
    expect_incremental_matches(at + "\rX HTTP/1.1\r\n\r\n", limits);
}

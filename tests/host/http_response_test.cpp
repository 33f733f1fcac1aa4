// Response writer (framing, overflow, misuse, header injection) and Server-Sent Events framing
// (fields, multi-line data, the dispatch-ending blank line, buffers too small by one).
#include <http/response.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::string sse(std::string_view event, std::string_view id, std::string_view data, size_t cap = 4096) {
    std::vector<char> buf(cap);
    size_t n = http::write_sse_event(buf, event, id, data);
    return std::string(buf.data(), n);
}

// Reads an event back the way the WHATWG event-stream parser does (data lines joined by LF).
std::string sse_data(const std::string& stream) {
    std::string data;
    size_t pos = 0;
    while (pos < stream.size()) {
        size_t end = stream.find('\n', pos);
        std::string line = stream.substr(pos, end - pos);
        pos = end + 1;
        if (line.rfind("data:", 0) == 0) {
            std::string value = line.substr(5);
            if (!value.empty() && value[0] == ' ')
                value.erase(0, 1);
            data += value + "\n";
        }
    }
    if (!data.empty())
        data.pop_back();
    return data;
}

} // namespace

TEST(HttpResponse, StatusTexts) {
    struct {
        uint16_t code;
        const char* text;
    } cases[] = {
        { 200, "OK" },
        { 202, "Accepted" },
        { 204, "No Content" },
        { 400, "Bad Request" },
        { 401, "Unauthorized" },
        { 403, "Forbidden" },
        { 404, "Not Found" },
        { 405, "Method Not Allowed" },
        { 406, "Not Acceptable" },
        { 408, "Request Timeout" },
        { 411, "Length Required" },
        { 413, "Content Too Large" },
        { 414, "URI Too Long" },
        { 415, "Unsupported Media Type" },
        { 429, "Too Many Requests" },
        { 431, "Request Header Fields Too Large" },
        { 500, "Internal Server Error" },
        { 501, "Not Implemented" },
        { 503, "Service Unavailable" },
        { 505, "HTTP Version Not Supported" },
        { 299, "" },
    };
    for (const auto& c : cases)
        EXPECT_STREQ(http::status_text(c.code), c.text) << c.code;
}

TEST(HttpResponse, WritesACompleteResponse) {
    char buf[256];
    http::ResponseWriter w(buf);
    std::string_view body = "{\"jsonrpc\":\"2.0\"}";
    w.status(200)
        .header("Content-Type", "application/json")
        .header("Content-Length", uint64_t(body.size()))
        .header("Mcp-Session-Id", "s1")
        .end_head()
        .body(body);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w.view(), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 17\r\n"
                        "Mcp-Session-Id: s1\r\n\r\n{\"jsonrpc\":\"2.0\"}");
    EXPECT_EQ(w.size(), w.view().size());
}

TEST(HttpResponse, WritesNumbersAndUnknownCodes) {
    char buf[128];
    http::ResponseWriter w(buf);
    w.status(299).header("A", uint64_t(0)).header("B", UINT64_MAX).end_head();
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w.view(), "HTTP/1.1 299 \r\nA: 0\r\nB: 18446744073709551615\r\n\r\n");
}

TEST(HttpResponse, OverflowAtEveryBufferSize) {
    const std::string full = "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno";
    for (size_t cap = 0; cap <= full.size(); ++cap) {
        std::vector<char> buf(cap + 1, '#'); // one guard byte past the span
        http::ResponseWriter w(std::span<char>(buf.data(), cap));
        w.status(404).header("Content-Length", uint64_t(2)).end_head().body("no");
        EXPECT_EQ(w.overflow(), cap < full.size()) << cap;
        EXPECT_EQ(w.ok(), cap == full.size()) << cap;
        EXPECT_LE(w.size(), cap);
        EXPECT_EQ(buf[cap], '#') << "wrote past the buffer at " << cap;
        EXPECT_EQ(full.substr(0, w.size()), w.view()); // a prefix, whole pieces only
    }
}

TEST(HttpResponse, RefusesMisuseAndHeaderInjection) {
    char buf[256];
    auto invalid = [&](auto build) {
        http::ResponseWriter w(buf);
        build(w);
        return w.invalid() && !w.ok() && !w.overflow();
    };
    EXPECT_TRUE(invalid([](auto& w) { w.header("A", "b"); })); // before status
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).status(200); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).body("x"); })); // body before end_head
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).end_head().header("A", "b"); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).end_head().end_head(); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(99); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(1000); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).header("A", "b\r\nSet-Cookie: x"); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).header("A", "b\nc"); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).header("A", std::string_view("b\0c", 3)); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).header("A B", "c"); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).header("", "c"); }));
    EXPECT_TRUE(invalid([](auto& w) { w.status(200).header("A:", "c"); }));
    // Nothing is written once invalid.
    http::ResponseWriter w(buf);
    w.status(200).header("A", "x\r\n").header("B", "c").end_head().body("z");
    EXPECT_EQ(w.view(), "HTTP/1.1 200 OK\r\n");
    // An empty body and an empty value are fine.
    http::ResponseWriter e(buf);
    e.status(204).header("X-Empty", "").end_head().body("");
    EXPECT_TRUE(e.ok());
    EXPECT_EQ(e.view(), "HTTP/1.1 204 No Content\r\nX-Empty: \r\n\r\n");
}

TEST(HttpResponse, SseEventFields) {
    EXPECT_EQ(sse("", "", "{\"a\":1}"), "data: {\"a\":1}\n\n");
    EXPECT_EQ(sse("message", "42", "x"), "event: message\nid: 42\ndata: x\n\n");
    EXPECT_EQ(sse("", "7", ""), "id: 7\ndata:\n\n"); // MCP's priming event: an id, empty data
}

TEST(HttpResponse, SseMultiLineDataRoundTrips) {
    EXPECT_EQ(sse("", "", "a\nb"), "data: a\ndata: b\n\n");
    EXPECT_EQ(sse("", "", "a\r\nb\rc"), "data: a\ndata: b\ndata: c\n\n");
    EXPECT_EQ(sse("", "", "a\n"), "data: a\ndata:\n\n");
    EXPECT_EQ(sse("", "", "\n\n"), "data:\ndata:\ndata:\n\n");
    EXPECT_EQ(sse("", "", " lead"), "data:  lead\n\n");
    for (std::string data : { "one", "a\nb\nc", "trailing\n", "\nleading", "", " x\n y", "a\r\n\r\nb" }) {
        std::string want = data;
        for (size_t i; (i = want.find("\r\n")) != std::string::npos;)
            want.replace(i, 2, "\n");
        EXPECT_EQ(sse_data(sse("", "1", data)), want) << data;
    }
}

TEST(HttpResponse, SseRefusesFieldBreakingNamesAndIds) {
    EXPECT_EQ(sse("a\nb", "", "x"), "");
    EXPECT_EQ(sse("", "1\r", "x"), "");
    EXPECT_EQ(sse("", std::string_view("1\0", 2), "x"), "");
    char buf[8];
    EXPECT_EQ(http::write_sse_event(buf, "a\nb", "", "x"), 0u);
}

TEST(HttpResponse, SseOverflowByOne) {
    const std::string want = "event: e\nid: 1\ndata: a\ndata: b\n\n";
    std::vector<char> buf(want.size() + 1, '#');
    EXPECT_EQ(http::write_sse_event(std::span<char>(buf.data(), want.size() - 1), "e", "1", "a\nb"), 0u);
    EXPECT_EQ(buf[want.size() - 1], '#');
    EXPECT_EQ(http::write_sse_event(std::span<char>(buf.data(), want.size()), "e", "1", "a\nb"), want.size());
    EXPECT_EQ(std::string(buf.data(), want.size()), want);
}

TEST(HttpResponse, SseComments) {
    char buf[32];
    size_t n = http::write_sse_comment(buf, "keep-alive");
    EXPECT_EQ(std::string_view(buf, n), ": keep-alive\n\n");
    n = http::write_sse_comment(buf, "");
    EXPECT_EQ(std::string_view(buf, n), ":\n\n");
    EXPECT_EQ(http::write_sse_comment(buf, "a\nb"), 0u);
    EXPECT_EQ(http::write_sse_comment(std::span<char>(buf, 13), "keep-alive"), 0u);
    EXPECT_EQ(http::write_sse_comment(std::span<char>(buf, 14), "keep-alive"), 14u);
}

// libFuzzer target for lib/http: the request-head reader on arbitrary bytes, and the field
// helpers and SSE writer on the same bytes.
//
// parse_head runs under default, tight, hash-drawn limits and limits at the input's own sizes,
// and each verdict is checked:
//  - Complete: head_bytes within the data and the head limit; every view inside the head
//    (path may be the literal "/"); names are tokens, values free of controls; counts and
//    Content-Length within the limits; header() finds the first field of each name; the head
//    alone (without what follows) parses the same; roomier limits give the same head.
//  - Error: a status of the allowed set and a reason.
//  - NeedMore: no limit is passed yet (the data is shorter than the head limit).
//  - Fed in two chunks (the buffer at a split point drawn from the input, then all of it): the
//    first call says NeedMore or exactly the final verdict, with the same head.
// Any inconsistency abort()s with a message, which libFuzzer reports as a crash.
#include <http/fields.h>
#include <http/request.h>
#include <http/response.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"

namespace {

#define CHECK(cond) FUZZ_CHECK("http_fuzz", cond)

bool inside(std::string_view part, std::string_view whole) {
    return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

bool is_token_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool same_result(const http::ParseResult& a, const http::ParseResult& b) {
    return a.status == b.status && a.http_status == b.http_status && std::strcmp(a.reason, b.reason) == 0;
}

bool same_head(const http::Head& a, const http::Head& b) {
    if (a.method != b.method || a.method_text != b.method_text || a.target != b.target || a.path != b.path ||
        a.query != b.query || a.authority != b.authority || a.minor != b.minor || a.header_count != b.header_count ||
        a.head_bytes != b.head_bytes || a.content_length != b.content_length ||
        a.has_content_length != b.has_content_length || a.keep_alive != b.keep_alive)
        return false;
    for (size_t i = 0; i < a.header_count; ++i)
        if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value)
            return false;
    return true;
}

void check_complete(std::string_view data, const http::Limits& limits, const http::Head& h) {
    CHECK(h.head_bytes > 0 && h.head_bytes <= data.size() && h.head_bytes <= limits.max_header_bytes);
    std::string_view head = data.substr(0, h.head_bytes);
    CHECK(inside(h.method_text, head) && !h.method_text.empty());
    CHECK(inside(h.target, head) && !h.target.empty());
    CHECK(inside(h.path, head) || h.path == "/");
    CHECK(inside(h.query, head) && inside(h.authority, head));
    CHECK(h.method_text.size() + h.target.size() + 10 <= limits.max_request_line);
    CHECK(h.minor == 0 || h.minor == 1);
    CHECK(h.minor == 0 || !h.authority.empty());
    CHECK(h.header_count <= limits.max_headers && h.header_count <= http::kMaxHeaders);
    CHECK(h.content_length <= limits.max_body && (h.has_content_length || h.content_length == 0));
    for (char c : h.method_text)
        CHECK(is_token_char(c));
    for (size_t i = 0; i < h.header_count; ++i) {
        const http::Header& f = h.headers[i];
        CHECK(inside(f.name, head) && inside(f.value, head) && !f.name.empty());
        for (char c : f.name)
            CHECK(is_token_char(c));
        for (char c : f.value)
            CHECK(c == '\t' || (uint8_t(c) >= 0x20 && c != 0x7f));
        CHECK(f.value.empty() || (f.value.front() != ' ' && f.value.back() != ' '));
        CHECK(!http::token_equals_ci(f.name, "transfer-encoding"));
        auto first = h.header(f.name);
        CHECK(first.has_value());
        size_t j = 0;
        while (!http::token_equals_ci(h.headers[j].name, f.name))
            ++j;
        CHECK(j <= i && first->data() == h.headers[j].value.data());
    }
    if (h.header("host"))
        CHECK(http::parse_host(*h.header("host")).has_value());
}

void check_limits(std::string_view data, const http::Limits& limits, size_t split) {
    http::Head h;
    auto r = http::parse_head(data, limits, h);
    switch (r.status) {
    case http::Parse::Complete: {
        check_complete(data, limits, h);
        // The head alone, and the head under roomier limits, read the same.
        http::Head alone;
        CHECK(same_result(http::parse_head(data.substr(0, h.head_bytes), limits, alone), r));
        CHECK(same_head(alone, h));
        http::Limits roomy { SIZE_MAX, SIZE_MAX, SIZE_MAX, UINT64_MAX };
        http::Head wide;
        CHECK(http::parse_head(data, roomy, wide).status == http::Parse::Complete && same_head(wide, h));
        break;
    }
    case http::Parse::Error: {
        uint16_t s = r.http_status;
        CHECK(s == 400 || s == 413 || s == 414 || s == 431 || s == 501 || s == 505);
        CHECK(r.reason != nullptr && r.reason[0] != '\0');
        break;
    }
    case http::Parse::NeedMore:
        CHECK(data.size() < limits.max_header_bytes); // else a limit would have been reported
        break;
    }
    // Two chunks: the buffer after the first, then after both.
    http::Head early;
    auto e = http::parse_head(data.substr(0, split), limits, early);
    if (e.status != http::Parse::NeedMore) {
        CHECK(same_result(e, r));
        if (e.status == http::Parse::Complete)
            CHECK(same_head(early, h) && early.target.data() == h.target.data());
    }
}

void check_parse_head(std::string_view data) {
    uint64_t h = fuzz_hash(data);
    size_t split = data.empty() ? 0 : size_t(h % (data.size() + 1));
    check_limits(data, http::Limits {}, split);
    http::Limits tight { 48, 160, 4, 64 };
    check_limits(data, tight, split);
    http::Limits drawn { size_t((h >> 8) % 64), size_t((h >> 16) % 256), size_t((h >> 24) % 80),
                         uint64_t((h >> 32) % 100) };
    check_limits(data, drawn, split);
    // Limits at the data's own sizes, where the off-by-ones are: the request line's length
    // (its CR included or not), the head limit right after it or at the end of the data.
    size_t line = std::min(data.find('\n'), data.size());
    size_t lines = size_t(std::count(data.begin(), data.end(), '\n'));
    http::Limits edge;
    edge.max_request_line = line - std::min<size_t>(line, (h >> 40) % 3);
    edge.max_header_bytes = (h >> 42) & 1 ? edge.max_request_line + (h >> 43) % 4
                                          : data.size() - std::min<size_t>(data.size(), (h >> 45) % 3);
    edge.max_headers = lines - std::min<size_t>(lines, (h >> 47) % 4);
    check_limits(data, edge, split);
}

void check_fields(std::string_view text) {
    if (auto hp = http::parse_host(text)) {
        CHECK(inside(hp->host, text) && hp->host.data() == text.data() && !hp->host.empty());
        CHECK(hp->has_port ? text.size() > hp->host.size() + 1 : text.size() == hp->host.size());
        CHECK(hp->has_port || hp->port == 0);
        // The same host with the scheme in front is an Origin with the default port.
        std::string origin = "https://" + std::string(text);
        auto o = http::parse_origin(origin);
        CHECK(o && o->host == hp->host && o->has_port == hp->has_port && o->port == (hp->has_port ? hp->port : 443));
        const std::string_view self[] = { hp->host };
        CHECK(http::host_allowed(text, self));
    } else {
        const std::string_view any[] = { text, "localhost" };
        CHECK(!http::host_allowed(text, any));
    }
    if (auto token = http::bearer_token(text)) {
        CHECK(!token->empty() && inside(*token, text) && token->data() + token->size() == text.data() + text.size());
        CHECK(token->find_first_of(" \t\r\n,;\"") == std::string_view::npos);
    }
    // Accepting a type is never weaker than refusing it outright, and a wildcard admits it.
    bool json = http::accepts(text, "application/json");
    if (json)
        CHECK(text.find('/') != std::string_view::npos);
    std::string with_star = std::string(text) + ", */*";
    CHECK(!json || http::accepts(with_star, "application/json") || text.find('"') != std::string_view::npos);
    if (http::media_type_is(text, "application/json"))
        CHECK(text.size() >= 16);
}

// SSE events read back the way the event-stream parser does give back the data.
void check_sse(std::string_view data) {
    std::vector<char> out(data.size() * 7 + 32);
    size_t n = http::write_sse_event(out, "message", "1", data);
    CHECK(n > 0 && n <= out.size());
    std::string_view stream(out.data(), n);
    CHECK(stream.size() >= 2 && stream.substr(stream.size() - 2) == "\n\n");
    std::string joined;
    size_t pos = 0, lines = 0;
    while (pos < n) {
        size_t end = stream.find('\n', pos);
        CHECK(end != std::string_view::npos);
        std::string_view line = stream.substr(pos, end - pos);
        CHECK(line.find('\r') == std::string_view::npos);
        if (line.substr(0, 5) == "data:") {
            std::string_view v = line.substr(5);
            if (!v.empty() && v[0] == ' ')
                v.remove_prefix(1);
            joined.append(v).push_back('\n');
            ++lines;
        }
        pos = end + 1;
    }
    CHECK(lines >= 1);
    joined.pop_back();
    std::string want;
    for (size_t i = 0; i < data.size(); ++i) { // CRLF and CR become LF
        if (data[i] == '\r') {
            want.push_back('\n');
            if (i + 1 < data.size() && data[i + 1] == '\n')
                ++i;
        } else {
            want.push_back(data[i]);
        }
    }
    CHECK(joined == want);
    CHECK(http::write_sse_event({ out.data(), n - 1 }, "message", "1", data) == 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    std::string_view data(reinterpret_cast<const char*>(bytes), size);
    check_parse_head(data);
    check_fields(data);
    check_sse(data);
    return 0;
}

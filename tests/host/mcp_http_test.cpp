// The Streamable HTTP transport from outside: raw HTTP requests in, raw responses out, through
// the real dispatcher. Statuses, sessions, the key headers, the DNS-rebinding guard, deferred
// calls and their SSE framing.
#include <http/request.h>
#include <mcp/server/server.h>
#include <mcp/transport/streamable_http.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

bool echo_tool(const json::Value& args, json::Writer& w, mcp::ToolError&) {
    w.begin_object().key("echo").string(args.find("text").plain_string().value_or("")).end_object();
    return true;
}

const char* kSchema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":64}},"
                      "\"additionalProperties\":false}";
const mcp::Tool kTools[] = {
    { "echo", "Echo", "Echoes text", kSchema, "{\"type\":\"object\"}", mcp::kKernelRead, echo_tool },
    { "slow", "Slow", "Runs in a tool task", kSchema, "{\"type\":\"object\"}", 0, echo_tool },
};
const std::string_view kAllow[] = { "echo", "slow" };
const std::string_view kHosts[] = { "127.0.0.1", "localhost", "[::1]" };

std::vector<mcp::PendingCall> g_started;
std::vector<mcp::AuditEvent> g_audit;
uint64_t g_now = 1'000'000'000;
uint64_t g_entropy = 7;

// "slow" is deferred (as the kernel runs it in a task); "echo" is too when g_defer is set.
bool start_call(const mcp::Tool& tool, const json::Value&, const mcp::PendingCall& call, mcp::ToolError&) {
    g_started.push_back(call);
    (void)tool;
    return true;
}

constexpr const char* kKey = "operator-secret-key-1";

struct Fixture {
    Fixture() {
        config.version = "0.1.0";
        config.tools = kTools;
        config.allowlist = kAllow;
        config.keys = &keys;
        config.transport = "http";
        config.now_ns = [] { return g_now; };
        config.now_rfc3339 = [](char* out, size_t cap) { snprintf(out, cap, "2026-11-23T08:00:00Z"); };
        config.audit = [](const mcp::AuditEvent& e) { g_audit.push_back(e); };
        EXPECT_TRUE(keys.add("op", mcp::Role::Operator, kKey).ok());
        server = std::make_unique<mcp::Server>(config, limiter);
        http.allowed_hosts = kHosts;
        http.now_ns = config.now_ns;
        http.now_rfc3339 = config.now_rfc3339;
        http.random = [](uint8_t* out, size_t len) { // a stand-in generator: distinct, not secure
            for (size_t i = 0; i < len; ++i)
                out[i] = static_cast<uint8_t>((++g_entropy * 0x9e3779b97f4a7c15ull) >> 56);
        };
        http.audit = config.audit;
        transport = std::make_unique<mcp::HttpTransport>(*server, http);
        g_started.clear();
        g_audit.clear();
    }
    void defer_calls() {
        config.start_call = start_call;
        server = std::make_unique<mcp::Server>(config, limiter);
        transport = std::make_unique<mcp::HttpTransport>(*server, http);
    }

    struct Response {
        mcp::HttpOutcome outcome;
        std::string text;
        int status = 0;
        std::string header(const std::string& name) const {
            size_t at = text.find("\r\n" + name + ": ");
            if (at == std::string::npos)
                return "";
            size_t start = at + name.size() + 4;
            return text.substr(start, text.find("\r\n", start) - start);
        }
        std::string body() const { return text.substr(text.find("\r\n\r\n") + 4); }
    };

    Response send(const std::string& raw, uint32_t conn = 1) {
        http::Head head;
        auto parsed = http::parse_head(raw, http::Limits {}, head);
        EXPECT_EQ(parsed.status, http::Parse::Complete) << raw;
        std::string_view body(raw.data() + head.head_bytes, raw.size() - head.head_bytes);
        std::vector<char> out(1 << 20);
        Response r;
        r.outcome = transport->handle(head, body, conn, out);
        r.text.assign(out.data(), r.outcome.len);
        if (r.text.size() > 12)
            r.status = std::stoi(r.text.substr(9, 3));
        return r;
    }

    static std::string post(const std::string& body, const std::string& extra = "",
                            const std::string& accept = "application/json, text/event-stream") {
        return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nAccept: " + accept +
               "\r\n" + extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    }

    std::string initialize(const std::string& extra = "") {
        auto r = send(post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
                           extra));
        EXPECT_EQ(r.status, 200) << r.text;
        return r.header("Mcp-Session-Id");
    }

    mcp::ServerConfig config;
    mcp::CallLimiter limiter { mcp::LimitConfig { 3, 1, 10 } };
    mcp::KeyStore keys;
    std::unique_ptr<mcp::Server> server;
    mcp::HttpConfig http;
    std::unique_ptr<mcp::HttpTransport> transport;
};

const std::string kCallEcho = R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})";

TEST(McpHttp, InitializeCreatesASessionThatLaterRequestsMustCarry) {
    Fixture f;
    std::string sid = f.initialize();
    ASSERT_EQ(sid.size(), 32u);
    EXPECT_EQ(f.transport->sessions_open(), 1u);
    EXPECT_NE(f.initialize(), sid) << "every session gets its own id";

    auto missing = f.send(f.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"));
    EXPECT_EQ(missing.status, 400) << missing.text;
    EXPECT_NE(missing.body().find("\"missing_session\""), std::string::npos);

    auto unknown = f.send(f.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
                                 "Mcp-Session-Id: 00000000000000000000000000000000\r\n"));
    EXPECT_EQ(unknown.status, 404);

    auto ok = f.send(f.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", "Mcp-Session-Id: " + sid + "\r\n"));
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(ok.header("Content-Type"), "application/json");
    EXPECT_NE(ok.body().find("\"echo\""), std::string::npos);

    auto note = f.send(f.post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
    EXPECT_EQ(note.status, 202);
    EXPECT_EQ(note.body(), "");

    auto end = f.send("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
    EXPECT_EQ(end.status, 204);
    auto gone = f.send(f.post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", "Mcp-Session-Id: " + sid + "\r\n"));
    EXPECT_EQ(gone.status, 404) << "an ended session is unknown";
}

TEST(McpHttp, SessionsExpireWhenIdle) {
    Fixture f;
    f.http.session_idle_ns = 5'000'000'000;
    f.transport = std::make_unique<mcp::HttpTransport>(*f.server, f.http);
    std::string sid = f.initialize();
    g_now += 6'000'000'000;
    f.transport->expire_idle();
    EXPECT_EQ(f.transport->sessions_open(), 0u);
    auto r = f.send(f.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", "Mcp-Session-Id: " + sid + "\r\n"));
    EXPECT_EQ(r.status, 404);
}

// The table is bounded, and nobody displaces another caller's session: a full table refuses an
// anonymous initialize (503, sessions_full); an authenticated caller makes room from its own
// sessions, and only when it has none from the oldest anonymous one.
TEST(McpHttp, TheSessionTableIsBoundedAndOnlyItsOwnOrAnonymousSessionsGiveWay) {
    Fixture f;
    const std::string auth = std::string("Authorization: Bearer ") + kKey + "\r\n";
    std::string first = f.initialize();
    g_now += 1000;
    std::string second = f.initialize();
    for (size_t i = 2; i < mcp::HttpTransport::kMaxSessions; ++i) {
        g_now += 1000;
        f.initialize();
    }
    EXPECT_EQ(f.transport->sessions_open(), mcp::HttpTransport::kMaxSessions);
    auto refused = f.send(f.post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
    EXPECT_EQ(refused.status, 503) << refused.text;
    EXPECT_NE(refused.body().find("\"sessions_full\""), std::string::npos);
    auto list = [&](const std::string& sid) {
        return f.send(f.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", "Mcp-Session-Id: " + sid + "\r\n")).status;
    };
    g_now += 1000;
    std::string mine = f.initialize(auth);
    EXPECT_EQ(list(first), 404) << "with none of its own, the operator's initialize took the oldest anonymous session's place";
    EXPECT_EQ(list(second), 200) << "only that one";
    g_now += 1000;
    std::string again = f.initialize(auth);
    EXPECT_EQ(list(mine), 404) << "then its own oldest session makes room, not another caller's";
    EXPECT_EQ(list(again), 200);
    EXPECT_EQ(list(second), 200) << "the anonymous sessions stay";
    EXPECT_EQ(f.send(f.post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})")).status,
              503) << "an anonymous caller still displaces nobody";
}

// Sessions are not authentication: a key presented at initialize does not carry over to later
// requests (each must present its own), and a session opened with a key refuses any other key.
TEST(McpHttp, EveryRequestCarriesItsKeyAndASessionRefusesAnotherKey) {
    Fixture f;
    EXPECT_TRUE(f.keys.add("op2", mcp::Role::Operator, "second-operator-key-22").ok());
    const std::string auth = std::string("Authorization: Bearer ") + kKey + "\r\n";
    std::string sid = "Mcp-Session-Id: " + f.initialize(auth) + "\r\n";
    auto without = f.send(f.post(kCallEcho, sid));
    EXPECT_EQ(without.status, 401) << "the initialize's key does not stand in for this request's: " << without.text;
    EXPECT_NE(without.body().find("\"auth_missing_api_key\""), std::string::npos);
    auto with = f.send(f.post(kCallEcho, sid + auth));
    EXPECT_EQ(with.status, 200) << with.text;
    auto other = f.send(f.post(kCallEcho, sid + "Authorization: Bearer second-operator-key-22\r\n"));
    EXPECT_EQ(other.status, 403) << other.text;
    EXPECT_NE(other.body().find("\"session_key_mismatch\""), std::string::npos);
    auto meta = f.send(f.post(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.basalt/api-key":"second-operator-key-22"}}})", sid));
    EXPECT_EQ(meta.status, 403) << "a key in _meta is held to the same rule";
    auto end = f.send("DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n" + sid + "Authorization: Bearer second-operator-key-22\r\n\r\n");
    EXPECT_EQ(end.status, 403) << "another key cannot end the session";
}

TEST(McpHttp, KeysInHeadersAuthenticateAndRefusalsMapToStatuses) {
    Fixture f;
    std::string sid = "Mcp-Session-Id: " + f.initialize() + "\r\n";
    auto anon = f.send(f.post(kCallEcho, sid));
    EXPECT_EQ(anon.status, 401) << anon.text;
    // RFC 6750 parameters that tell an OAuth-capable client this is about an API key.
    const std::string challenge = anon.header("WWW-Authenticate");
    EXPECT_EQ(challenge.rfind("Bearer realm=\"basalt\", error=\"invalid_request\", error_description=\"", 0), 0u)
        << challenge;
    EXPECT_NE(challenge.find("API key, not OAuth"), std::string::npos) << challenge;
    EXPECT_NE(anon.body().find("X-MCP-API-Key"), std::string::npos) << "the body says how to send the key: " << anon.text;
    EXPECT_NE(anon.body().find("\"ok\":false"), std::string::npos) << "the envelope is the body";
    EXPECT_NE(anon.body().find("\"auth_missing_api_key\""), std::string::npos);

    auto bad = f.send(f.post(kCallEcho, sid + "Authorization: Bearer wrong-key-000000000\r\n"));
    EXPECT_EQ(bad.status, 403);
    EXPECT_NE(bad.body().find("\"auth_invalid_api_key\""), std::string::npos);

    auto scheme = f.send(f.post(kCallEcho, sid + "Authorization: Basic Zm9vOmJhcg==\r\n"));
    EXPECT_EQ(scheme.status, 401);
    EXPECT_EQ(g_audit.back().outcome, mcp::AuditOutcome::Deny) << "transport refusals are audited";

    auto bearer = f.send(f.post(kCallEcho, sid + "Authorization: Bearer " + kKey + "\r\n"));
    EXPECT_EQ(bearer.status, 200) << bearer.text;
    EXPECT_NE(bearer.body().find("\"echo\":\"hi\""), std::string::npos);
    auto header = f.send(f.post(kCallEcho, sid + "X-MCP-API-Key: " + std::string(kKey) + "\r\n"));
    EXPECT_EQ(header.status, 200);
    EXPECT_EQ(g_audit.back().principal->role, mcp::Role::Operator);

    // The bucket holds 3 calls and refills one a second (the clock stands still): the fourth is over.
    EXPECT_EQ(f.send(f.post(kCallEcho, sid + "X-MCP-API-Key: " + std::string(kKey) + "\r\n")).status, 200);
    auto over = f.send(f.post(kCallEcho, sid + "X-MCP-API-Key: " + std::string(kKey) + "\r\n"));
    EXPECT_EQ(over.status, 429) << over.text;
    EXPECT_EQ(over.header("Retry-After"), "1");
    EXPECT_NE(over.body().find("\"limit_rate_exceeded\""), std::string::npos);
}

// A key that matches nothing is refused whatever the method (a mistyped key must not look like a
// working anonymous connection); no key at all still reaches what anonymous callers may see.
TEST(McpHttp, AnUnknownKeyIsRefusedForEveryMethod) {
    Fixture f;
    const std::string sid = "Mcp-Session-Id: " + f.initialize() + "\r\n";
    const std::string wrong = "Authorization: Bearer wrong-key-000000000\r\n";
    const std::string modern_meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";
    const std::string handshake[] = {
        R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
        R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})",
    };
    for (const std::string& body : handshake) {
        auto anon = f.send(f.post(body, sid));
        EXPECT_EQ(anon.status, 200) << body << ": " << anon.text;
        auto bad = f.send(f.post(body, sid + wrong));
        EXPECT_EQ(bad.status, 403) << body << ": " << bad.text;
        EXPECT_NE(bad.body().find("\"auth_invalid_api_key\""), std::string::npos) << bad.text;
        EXPECT_EQ(g_audit.back().outcome, mcp::AuditOutcome::Deny);
    }
    for (const char* method : { "server/discover", "tools/list" }) {
        const std::string body = std::string(R"({"jsonrpc":"2.0","id":4,"method":")") + method + R"(","params":{)" + modern_meta + "}}";
        EXPECT_EQ(f.send(f.post(body)).status, 200) << method;
        auto bad = f.send(f.post(body, wrong));
        EXPECT_EQ(bad.status, 403) << method << ": " << bad.text;
    }
    auto good = f.send(f.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})", sid + "Authorization: Bearer " + kKey + "\r\n"));
    EXPECT_EQ(good.status, 200) << good.text;
}

// The paths an OAuth client probes after a 401 answer plainly that no OAuth is spoken here.
TEST(McpHttp, OAuthProbesHearThatTheServerTakesAnApiKey) {
    Fixture f;
    for (const char* path : { "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                              "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration",
                              "/register", "/authorize", "/token" }) {
        const std::string body = "{}";
        auto r = f.send(std::string("POST ") + path + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
                        "Content-Length: 2\r\n\r\n" + body);
        EXPECT_EQ(r.status, 404) << path;
        EXPECT_EQ(r.header("Content-Type"), "application/json") << path;
        EXPECT_NE(r.body().find("\"oauth_not_supported\""), std::string::npos) << path << ": " << r.text;
        EXPECT_NE(r.body().find("does not use OAuth; it takes an API key"), std::string::npos) << r.text;
    }
    auto other = f.send("GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
    EXPECT_EQ(other.status, 404);
    EXPECT_NE(other.body().find("\"unknown_path\""), std::string::npos) << other.text;
}

TEST(McpHttp, HostAndOriginGuardAgainstDnsRebinding) {
    Fixture f;
    auto evil_host = f.send("POST /mcp HTTP/1.1\r\nHost: evil.example:8080\r\nContent-Type: application/json\r\n"
                            "Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{}");
    EXPECT_EQ(evil_host.status, 403);
    EXPECT_NE(evil_host.body().find("host_not_allowed"), std::string::npos);
    auto evil_origin = f.send(f.post("{}", "Origin: http://evil.example\r\n"));
    EXPECT_EQ(evil_origin.status, 403);
    EXPECT_NE(evil_origin.body().find("origin_not_allowed"), std::string::npos);
    auto good_origin = f.send(f.post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
                                     "Origin: http://localhost:6274\r\n"));
    EXPECT_EQ(good_origin.status, 200);
}

TEST(McpHttp, MethodsMediaTypesAndVersionsAreChecked) {
    Fixture f;
    EXPECT_EQ(f.send("GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 404);
    auto put = f.send("PUT /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(put.status, 405);
    EXPECT_EQ(put.header("Allow"), "GET, POST, DELETE");
    EXPECT_EQ(f.send("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\r\n").status, 406);
    EXPECT_EQ(f.send("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n").status, 405);
    EXPECT_EQ(f.send("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nAccept: */*\r\n"
                     "Content-Length: 2\r\n\r\n{}")
                  .status,
              415);
    EXPECT_EQ(f.send(f.post("{}", "", "application/json")).status, 406) << "SSE must be acceptable too";
    EXPECT_EQ(f.send(f.post("", "")).status, 400);
    EXPECT_EQ(f.send(f.post("{}", "MCP-Protocol-Version: 1999-01-01\r\n")).status, 400);
    EXPECT_EQ(f.send("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 400);
}

TEST(McpHttp, EachSessionHasOneStandaloneStream) {
    Fixture f;
    std::string sid = f.initialize();
    auto get = [&](const std::string& id) {
        return f.send("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + id + "\r\n\r\n");
    };
    auto stream = get(sid);
    EXPECT_EQ(stream.outcome.kind, mcp::HttpOutcome::Stream);
    EXPECT_EQ(stream.status, 200);
    EXPECT_EQ(stream.header("Content-Type"), "text/event-stream");
    EXPECT_EQ(get(sid).status, 409) << "one stream per session";
    EXPECT_EQ(get("0123456789abcdef0123456789abcdef").status, 404);
    bool gone = true;
    std::vector<char> out(4096);
    EXPECT_EQ(f.transport->next_notification(stream.outcome.session, out, &gone), 0u) << "nothing subscribed";
    EXPECT_FALSE(gone);
    f.transport->stream_closed(stream.outcome.session);
    EXPECT_EQ(get(sid).status, 200) << "the session may listen again once its stream closed";
    f.send("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
    f.transport->next_notification(stream.outcome.session, out, &gone);
    EXPECT_TRUE(gone) << "an ended session ends its stream";
}

TEST(McpHttp, ModernRequestsAreStateless) {
    Fixture f;
    auto r = f.send(f.post(R"({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})"));
    EXPECT_EQ(r.status, 200) << r.text;
    EXPECT_EQ(r.header("Mcp-Session-Id"), "");
    EXPECT_NE(r.body().find("\"supportedVersions\""), std::string::npos);
    EXPECT_EQ(f.transport->sessions_open(), 0u);
}

TEST(McpHttp, DeferredCallsAreAnsweredOnTheirConnection) {
    Fixture f;
    f.defer_calls();
    std::string sid = "Mcp-Session-Id: " + f.initialize() + "\r\n";
    auto r = f.send(f.post(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}})", sid), 77);
    EXPECT_EQ(r.outcome.kind, mcp::HttpOutcome::Deferred);
    EXPECT_EQ(r.text, "");
    ASSERT_EQ(g_started.size(), 1u);
    EXPECT_EQ(g_started[0].reply_to, 77u) << "the answer goes to the connection that asked";
    EXPECT_NE(g_started[0].origin, 0u);

    // A second session's request with the same id is a different call.
    std::string other = "Mcp-Session-Id: " + f.initialize() + "\r\n";
    f.send(f.post(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}})", other), 78);
    ASSERT_EQ(g_started.size(), 2u);
    EXPECT_NE(g_started[0].origin, g_started[1].origin);
    EXPECT_FALSE(g_started[1].matches("9", false, g_started[0].origin));
}

TEST(McpHttp, SseFramingIsChunked) {
    std::vector<char> out(4096);
    size_t n = mcp::HttpTransport::sse_head(out, true);
    std::string head(out.data(), n);
    EXPECT_NE(head.find("Content-Type: text/event-stream\r\n"), std::string::npos);
    EXPECT_NE(head.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
    n = mcp::HttpTransport::sse_event(out, R"({"a":1})");
    std::string event(out.data(), n);
    std::string frame = "event: message\ndata: {\"a\":1}\n\n";
    char size[16];
    snprintf(size, sizeof size, "%zx\r\n", frame.size());
    EXPECT_EQ(event, size + frame + "\r\n");
    n = mcp::HttpTransport::sse_end(out);
    EXPECT_EQ(std::string(out.data(), n), "0\r\n\r\n");
    n = mcp::HttpTransport::json_response(out, "{}", false);
    std::string json(out.data(), n);
    EXPECT_NE(json.find("Content-Length: 2\r\n"), std::string::npos);
    EXPECT_NE(json.find("Connection: close\r\n"), std::string::npos);
}

} // namespace

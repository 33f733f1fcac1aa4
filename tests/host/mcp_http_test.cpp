// The Streamable HTTP transport from outside: raw HTTP requests in, raw responses out, through
// the real dispatcher. Statuses, sessions, the key headers, the DNS-rebinding guard, deferred
// calls and their SSE framing.
#include <http/request.h>
#include <mcp/server/server.h>
#include <mcp/server/client_request.h>
#include <mcp/transport/mirrored_headers.h>
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
        hooks.now_ns_fn = [] { return g_now; };
        hooks.now_rfc3339_fn = [](char* out, size_t cap) { snprintf(out, cap, "2026-11-23T08:00:00Z"); };
        hooks.audit_fn = [](const mcp::AuditEvent& e) { g_audit.push_back(e); };
        EXPECT_TRUE(keys.add("op", mcp::Role::Operator, kKey).ok());
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
        http.allowed_hosts = kHosts;
        http.now_ns = hooks.now_ns_fn;
        http.now_rfc3339 = hooks.now_rfc3339_fn;
        http.random = [](uint8_t* out, size_t len) { // a stand-in generator: distinct, not secure
            for (size_t i = 0; i < len; ++i)
                out[i] = static_cast<uint8_t>((++g_entropy * 0x9e3779b97f4a7c15ull) >> 56);
        };
        http.audit = hooks.audit_fn;
        transport = std::make_unique<mcp::HttpTransport>(*server, http);
        g_started.clear();
        g_audit.clear();
    }
    void defer_calls() {
        hooks.start_call = start_call;
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
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

    // A 2026-07-28 request as a conforming client sends it: its revision, method and name (tool,
    // prompt or resource) mirrored in headers.
    static std::string post_modern(const std::string& body, const std::string& extra = "") {
        json::Node nodes[512];
        auto doc = json::Document::parse(body, nodes);
        EXPECT_TRUE(doc.ok()) << body;
        std::string headers = "MCP-Protocol-Version: 2026-07-28\r\n";
        if (doc) {
            json::Value root = doc->root();
            headers += "Mcp-Method: " + std::string(root.find("method").plain_string().value_or("")) + "\r\n";
            json::Value params = root.find("params");
            json::Value name = params.find("name").valid() ? params.find("name") : params.find("uri");
            if (name.is_string())
                headers += "Mcp-Name: " + std::string(name.plain_string().value_or("")) + "\r\n";
        }
        return post(body, headers + extra);
    }

    std::string initialize(const std::string& extra = "") {
        auto r = send(post(
            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
            extra));
        EXPECT_EQ(r.status, 200) << r.text;
        return r.header("Mcp-Session-Id");
    }

    mcp::ServerConfig config;

    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter { mcp::LimitConfig { 3, 1, 10 } };
    mcp::KeyStore keys;
    std::unique_ptr<mcp::Server> server;
    mcp::HttpConfig http;
    std::unique_ptr<mcp::HttpTransport> transport;
};

const std::string kCallEcho =
    R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})";

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

    auto note = f.send(
        f.post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
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
    auto refused = f.send(f.post(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
    EXPECT_EQ(refused.status, 503) << refused.text;
    EXPECT_NE(refused.body().find("\"sessions_full\""), std::string::npos);
    auto list = [&](const std::string& sid) {
        return f.send(f.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", "Mcp-Session-Id: " + sid + "\r\n"))
            .status;
    };
    g_now += 1000;
    std::string mine = f.initialize(auth);
    EXPECT_EQ(list(first), 404)
        << "with none of its own, the operator's initialize took the oldest anonymous session's place";
    EXPECT_EQ(list(second), 200) << "only that one";
    g_now += 1000;
    std::string again = f.initialize(auth);
    EXPECT_EQ(list(mine), 404) << "then its own oldest session makes room, not another caller's";
    EXPECT_EQ(list(again), 200);
    EXPECT_EQ(list(second), 200) << "the anonymous sessions stay";
    EXPECT_EQ(
        f
            .send(f.post(
                R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"))
            .status,
        503)
        << "an anonymous caller still displaces nobody";
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
    auto meta = f.send(f.post(
        R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.basalt/api-key":"second-operator-key-22"}}})",
        sid));
    EXPECT_EQ(meta.status, 403) << "a key in _meta is held to the same rule";
    auto end = f.send("DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n" + sid +
                      "Authorization: Bearer second-operator-key-22\r\n\r\n");
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
    EXPECT_NE(anon.body().find("X-MCP-API-Key"), std::string::npos)
        << "the body says how to send the key: " << anon.text;
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
    const std::string modern_meta =
        R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";
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
        const std::string body = std::string(R"({"jsonrpc":"2.0","id":4,"method":")") + method + R"(","params":{)" +
                                 modern_meta + "}}";
        EXPECT_EQ(f.send(f.post_modern(body)).status, 200) << method;
        auto bad = f.send(f.post_modern(body, wrong));
        EXPECT_EQ(bad.status, 403) << method << ": " << bad.text;
    }
    auto good = f.send(
        f.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})", sid + "Authorization: Bearer " + kKey + "\r\n"));
    EXPECT_EQ(good.status, 200) << good.text;
}

// The paths an OAuth client probes after a 401 answer plainly that no OAuth is spoken here, in
// the shape OAuth clients parse (RFC 6749 section 5.2: `error` a string code and
// `error_description`), not the canonical envelope whose `error` is an object.
TEST(McpHttp, OAuthProbesHearThatTheServerTakesAnApiKey) {
    Fixture f;
    struct Probe {
        const char* path;
        int status;
    };
    for (Probe p :
         { Probe { "/.well-known/oauth-protected-resource", 404 },
           Probe { "/.well-known/oauth-protected-resource/mcp", 404 },
           Probe { "/.well-known/oauth-authorization-server", 404 }, Probe { "/.well-known/openid-configuration", 404 },
           Probe { "/register", 400 }, Probe { "/authorize", 400 }, Probe { "/token", 400 } }) {
        const std::string body = "{}";
        auto r = f.send(std::string("POST ") + p.path +
                        " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
                        "Content-Length: 2\r\n\r\n" +
                        body);
        EXPECT_EQ(r.status, p.status) << p.path;
        EXPECT_EQ(r.header("Content-Type"), "application/json") << p.path;
        json::Node nodes[16];
        const std::string answer = r.body();
        auto doc = json::Document::parse(answer, nodes);
        ASSERT_TRUE(doc.ok()) << p.path << ": " << r.text;
        json::Value root = doc->root();
        EXPECT_EQ(root.find("error").plain_string().value_or("<not a string>"), "invalid_request")
            << p.path << ": " << r.text;
        EXPECT_NE(
            root.find("error_description").plain_string().value_or("").find("does not use OAuth; it takes an API key"),
            std::string::npos)
            << p.path << ": " << r.text;
    }
    // Everything else keeps the canonical envelope (/mcp's 401: KeysInHeadersAuthenticate...).
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
    auto good_origin = f.send(f.post(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
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
        return f.send("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + id +
                      "\r\n\r\n");
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
    auto r = f.send(f.post_modern(
        R"({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})"));
    EXPECT_EQ(r.status, 200) << r.text;
    EXPECT_EQ(r.header("Mcp-Session-Id"), "");
    EXPECT_NE(r.body().find("\"supportedVersions\""), std::string::npos);
    EXPECT_EQ(f.transport->sessions_open(), 0u);
}

TEST(McpHttp, DeferredCallsAreAnsweredOnTheirConnection) {
    Fixture f;
    f.defer_calls();
    std::string sid = "Mcp-Session-Id: " + f.initialize() + "\r\n";
    auto r = f.send(f.post(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}})",
                           sid),
                    77);
    EXPECT_EQ(r.outcome.kind, mcp::HttpOutcome::Deferred);
    EXPECT_EQ(r.text, "");
    ASSERT_EQ(g_started.size(), 1u);
    EXPECT_EQ(g_started[0].reply_to, 77u) << "the answer goes to the connection that asked";
    EXPECT_NE(g_started[0].origin, 0u);

    // A second session's request with the same id is a different call.
    std::string other = "Mcp-Session-Id: " + f.initialize() + "\r\n";
    f.send(f.post(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}})", other),
           78);
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

// ---- 2026-07-28 over HTTP: protocol errors' statuses and the headers that mirror the body ----

namespace {

const std::string kModernMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";

std::string modern_body(const std::string& method, const std::string& params = "", int id = 7) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":{)" + params +
           (params.empty() ? "" : ",") + kModernMeta + "}}";
}

struct Rpc {
    int status;
    json::Document doc;
    std::string text;
    std::vector<json::Node> nodes = std::vector<json::Node>(4096);
    explicit Rpc(const Fixture::Response& r) : status(r.status), text(r.body()) {
        auto d = json::Document::parse(text, nodes);
        EXPECT_TRUE(d.ok()) << r.text;
        if (d)
            doc = *d;
    }
    json::Value root() const { return doc.root(); }
    int64_t code() const { return root().find("error").find("code").as_int64().value_or(0); }
};

// Mirrored arguments: a string, an integer and a boolean at the top, and one nested.
const char* kMirrorSchema =
    R"({"type":"object","properties":{"region":{"type":"string","maxLength":64,"x-mcp-header":"Region"},)"
    R"("priority":{"type":"integer","minimum":-100,"maximum":100,"x-mcp-header":"Priority"},)"
    R"("verbose":{"type":"boolean","x-mcp-header":"Verbose"},)"
    R"("where":{"type":"object","properties":{"zone":{"type":"string","maxLength":16,"x-mcp-header":"Zone"}},"additionalProperties":false}},)"
    R"("additionalProperties":false})";
bool mirror_tool(const json::Value&, json::Writer& w, mcp::ToolError&) {
    w.begin_object().key("ok").boolean(true).end_object();
    return true;
}
mcp::Tool mirror_tools[] = {
    { "mirror", "Mirror", "Mirrored arguments", kMirrorSchema, "{\"type\":\"object\"}", 0, mirror_tool },
    { "asks", "Asks", "Needs sampling", kSchema, "{\"type\":\"object\"}", 0, echo_tool },
};
const std::string_view kMirrorAllow[] = { "mirror", "asks" };

struct ModernFixture : Fixture {
    ModernFixture() {
        mirror_tools[1].client_needs = mcp::kClientSampling;
        config.tools = mirror_tools;
        // Messages larger than the dispatcher's own arena, as the kernel allows them.
        hooks.alloc_nodes_fn = [](size_t count) { return new json::Node[count]; };
        hooks.free_nodes_fn = [](json::Node* nodes) { delete[] nodes; };
        config.allowlist = kMirrorAllow;
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
        transport = std::make_unique<mcp::HttpTransport>(*server, http);
    }
    // A tools/call of "mirror" with these arguments and extra headers beside the standard ones.
    Rpc call(const std::string& arguments, const std::string& headers) {
        g_now += 1'000'000'000; // a second apart: the caller's rate bucket never runs dry
        return Rpc(
            send(post(modern_body("tools/call", R"("name":"mirror","arguments":)" + arguments),
                      "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: mirror\r\n" + headers)));
    }
};

} // namespace

TEST(McpHttp, ModernProtocolErrorsHaveTheirStatusesAndEchoTheId) {
    ModernFixture f;
    // _meta without its required members: 400, -32602, the request's id.
    Rpc meta(f.send(f.post(R"({"jsonrpc":"2.0","id":101,"method":"server/discover","params":{}})",
                           "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n")));
    EXPECT_EQ(meta.status, 400) << meta.text;
    EXPECT_EQ(meta.code(), -32602);
    EXPECT_EQ(meta.root().find("id").as_int64(), 101);
    // Not a method of the revision (removed ones included): 404 with -32601.
    for (const char* method : { "unknown/method", "initialize", "ping", "logging/setLevel", "resources/subscribe" }) {
        Rpc r(f.send(f.post_modern(modern_body(method, "", 500))));
        EXPECT_EQ(r.status, 404) << method << ": " << r.text;
        EXPECT_EQ(r.code(), -32601) << method;
        EXPECT_EQ(r.root().find("id").as_int64(), 500) << method;
    }
    // A revision not served, named alike in header and body: 400, -32022, what is served.
    std::string v999 = modern_body("server/discover", "", 301);
    v999.replace(v999.find("2026-07-28"), 10, "v999.0.0");
    Rpc unsupported(f.send(f.post(v999, "MCP-Protocol-Version: v999.0.0\r\nMcp-Method: server/discover\r\n")));
    EXPECT_EQ(unsupported.status, 400) << unsupported.text;
    EXPECT_EQ(unsupported.code(), -32022);
    EXPECT_EQ(unsupported.root().find("id").as_int64(), 301);
    json::Value data = unsupported.root().find("error").find("data");
    EXPECT_TRUE(data.find("supported").at(0).string_equals("2026-07-28"));
    EXPECT_TRUE(data.find("requested").string_equals("v999.0.0"));
    // The header says one revision, the body another: a mismatch, not a negotiation.
    Rpc mismatch(f.send(f.post(v999, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n")));
    EXPECT_EQ(mismatch.status, 400);
    EXPECT_EQ(mismatch.code(), -32020) << mismatch.text;
    // A tool that cannot work without sampling, for a client that did not declare it: 400,
    // -32021, what is missing as a capabilities object; declared, the call goes ahead.
    Rpc needs(f.send(f.post_modern(modern_body("tools/call", R"("name":"asks","arguments":{})", 401))));
    EXPECT_EQ(needs.status, 400) << needs.text;
    EXPECT_EQ(needs.code(), -32021);
    EXPECT_TRUE(needs.root().find("error").find("data").find("requiredCapabilities").find("sampling").is_object());
    std::string with_sampling = modern_body("tools/call", R"("name":"asks","arguments":{})", 402);
    with_sampling.replace(with_sampling.find(R"(clientCapabilities":{})"), 22,
                          R"(clientCapabilities":{"sampling":{}})");
    Rpc asked(f.send(f.post_modern(with_sampling)));
    EXPECT_EQ(asked.status, 200) << asked.text;
    EXPECT_EQ(asked.root().find("result").find("isError").as_bool(), false);
}

TEST(McpHttp, StandardHeadersMustMirrorTheBody) {
    ModernFixture f;
    const std::string list = modern_body("tools/list");
    const std::string v = "MCP-Protocol-Version: 2026-07-28\r\n";
    auto status = [&](const std::string& body, const std::string& headers) {
        Rpc r(f.send(f.post(body, headers)));
        if (r.status == 400) {
            EXPECT_EQ(r.code(), -32020) << r.text;
        }
        return r.status;
    };
    EXPECT_EQ(status(list, v + "Mcp-Method: tools/list\r\n"), 200);
    EXPECT_EQ(status(list, v + "mcp-method: tools/list\r\n"), 200) << "header names are case-insensitive";
    EXPECT_EQ(status(list, v + "MCP-METHOD: tools/list\r\n"), 200);
    EXPECT_EQ(status(list, v), 400) << "Mcp-Method missing";
    EXPECT_EQ(status(list, v + "Mcp-Method: prompts/list\r\n"), 400);
    EXPECT_EQ(status(list, v + "Mcp-Method: TOOLS/LIST\r\n"), 400) << "values are case-sensitive";
    EXPECT_EQ(status(list, "Mcp-Method: tools/list\r\n"), 400) << "MCP-Protocol-Version missing";
    const std::string call = modern_body("tools/call", R"("name":"mirror","arguments":{})");
    const std::string m = v + "Mcp-Method: tools/call\r\n";
    EXPECT_EQ(status(call, m + "Mcp-Name: mirror\r\n"), 200);
    EXPECT_EQ(status(call, m + "Mcp-Name:   mirror  \r\n"), 200) << "surrounding whitespace is not part of a value";
    EXPECT_EQ(status(call, m + "Mcp-Name: =?base64?bWlycm9y?=\r\n"), 200) << "a name may come base64-encoded";
    EXPECT_EQ(status(call, m), 400) << "Mcp-Name missing";
    EXPECT_EQ(status(call, m + "Mcp-Name: wrong_tool_name\r\n"), 400);
}

// A body too large for the transport's own look at it is checked all the same: the dispatcher
// compares the headers with the body as it parsed it.
TEST(McpHttp, LargeBodiesDoNotEscapeTheHeaderCheck) {
    ModernFixture f;
    std::string pad = R"("pad":[0)";
    for (int i = 0; i < 6000; ++i)
        pad += ",0";
    pad += "]";
    const std::string big = modern_body("tools/list", pad);
    Rpc mismatched(f.send(f.post(big, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: prompts/list\r\n")));
    EXPECT_EQ(mismatched.status, 400) << mismatched.text.substr(0, 300);
    EXPECT_EQ(mismatched.code(), -32020);
    Rpc missing(f.send(f.post(big)));
    EXPECT_EQ(missing.status, 400) << "no headers at all";
    Rpc good(f.send(f.post(big, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n")));
    EXPECT_EQ(good.status, 200) << good.text.substr(0, 300);
}

TEST(McpHttp, McpParamHeadersMustMatchTheirArguments) {
    ModernFixture f;
    auto ok = [&](const std::string& args, const std::string& headers) { return f.call(args, headers).status == 200; };
    EXPECT_TRUE(ok(R"({"region":"us-west1"})", "Mcp-Param-Region: us-west1\r\n"));
    EXPECT_TRUE(ok(R"({"region":"Hello"})", "Mcp-Param-Region: =?base64?SGVsbG8=?=\r\n"));
    EXPECT_FALSE(ok(R"({"region":"Hello"})", "Mcp-Param-Region: =?base64?SGVsbG8?=\r\n")) << "padding is required";
    EXPECT_FALSE(ok(R"({"region":"Hello"})", "Mcp-Param-Region: =?base64?SGVs!!!bG8=?=\r\n"));
    EXPECT_TRUE(ok(R"({"region":"SGVsbG8="})", "Mcp-Param-Region: SGVsbG8=\r\n")) << "no sentinel: a literal";
    EXPECT_TRUE(ok(R"({"region":"=?base64?SGVsbG8="})", "Mcp-Param-Region: =?base64?SGVsbG8=\r\n"));
    EXPECT_TRUE(ok(R"({"region":"Hello, \u4e16\u754c"})", "Mcp-Param-Region: =?base64?SGVsbG8sIOS4lueVjA==?=\r\n"));
    EXPECT_FALSE(ok(R"({"region":"eu"})", "")) << "an argument present, its header missing";
    EXPECT_FALSE(ok(R"({"region":"eu"})", "Mcp-Param-Region: us\r\n"));
    EXPECT_TRUE(ok("{}", "")) << "no argument, no header expected";
    EXPECT_TRUE(ok(R"({"region":null})", "")) << "null counts as absent";
    EXPECT_FALSE(ok("{}", "Mcp-Param-Region: eu\r\n")) << "a header claiming an argument the body lacks";
    EXPECT_TRUE(ok(R"({"priority":42})", "Mcp-Param-Priority: 42\r\n"));
    EXPECT_TRUE(ok(R"({"priority":42})", "Mcp-Param-Priority: 42.0\r\n")) << "integers compare as numbers";
    EXPECT_FALSE(ok(R"({"priority":42})", "Mcp-Param-Priority: 43\r\n"));
    EXPECT_FALSE(ok(R"({"priority":42})", "Mcp-Param-Priority: forty-two\r\n"));
    EXPECT_TRUE(ok(R"({"verbose":true})", "Mcp-Param-Verbose: true\r\n"));
    EXPECT_FALSE(ok(R"({"verbose":true})", "Mcp-Param-Verbose: True\r\n"));
    EXPECT_TRUE(ok(R"({"where":{"zone":"a1"}})", "mcp-param-zone: a1\r\n")) << "nested, any header-name case";
    EXPECT_FALSE(ok(R"({"where":{"zone":"a1"}})", "Mcp-Param-Zone: b2\r\n"));
    Rpc bad = f.call(R"({"region":"eu"})", "Mcp-Param-Region: us\r\n");
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ(bad.code(), -32020);
    EXPECT_NE(bad.text.find("Mcp-Param-Region"), std::string::npos) << "the error names the header: " << bad.text;
}

TEST(McpHttp, HeaderValuesDecode) {
    char buf[64];
    EXPECT_EQ(mcp::decode_header_value("us-west1", buf).value_or("?"), "us-west1");
    EXPECT_EQ(mcp::decode_header_value("=?base64?IHBhZGRlZCA=?=", buf).value_or("?"), " padded ");
    EXPECT_EQ(mcp::decode_header_value(R"(=?base64??=)", buf).value_or("?"), "");
    EXPECT_FALSE(mcp::decode_header_value("a\x01z", buf)) << "control characters are not plain values";
    EXPECT_FALSE(mcp::decode_header_value("caf\xc3\xa9", buf)) << "nor is non-ASCII text";
    EXPECT_FALSE(mcp::decode_header_value("=?base64?/w==?=", buf)) << "decoded bytes must be UTF-8";
    EXPECT_FALSE(mcp::decode_header_value(std::string(100, 'a'), buf)) << "longer than the buffer";
}

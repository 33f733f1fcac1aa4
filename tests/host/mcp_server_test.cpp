// The MCP dispatcher from outside: JSON-RPC framing rules, version negotiation, paginated
// tools/list, tools/call through the policy (allowlist, scopes, limits) and the envelope.
#include <json/json.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

bool echo_tool(const json::Value& args, json::Writer& w, mcp::ToolError&) {
    w.begin_object().key("echo");
    auto text = args.find("text").plain_string();
    w.string(text.value_or("")).end_object();
    return true;
}

bool failing_tool(const json::Value&, json::Writer&, mcp::ToolError& err) {
    err = { mcp::ErrorCode::NotFound, "nothing there" };
    return false;
}

bool huge_tool(const json::Value&, json::Writer& w, mcp::ToolError&) {
    w.begin_object().key("x").begin_array();
    for (int i = 0; i < 20000; ++i)
        w.number(int64_t(123456789));
    w.end_array().end_object();
    return true;
}

const char* kSchema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":64}},"
                      "\"additionalProperties\":false}";
const char* kOut = "{\"type\":\"object\"}";

const mcp::Tool kTools[] = {
    { "echo", "Echo", "Echoes text", kSchema, kOut, mcp::kKernelRead, echo_tool },
    { "admin_only", "Admin", "Needs kernel:admin", kSchema, kOut, mcp::kKernelAdmin, echo_tool },
    { "missing", "Missing", "Fails", kSchema, kOut, 0, failing_tool },
    { "huge", "Huge", "Too much output", kSchema, kOut, 0, huge_tool },
    { "hidden", "Hidden", "Not allowlisted", kSchema, kOut, 0, echo_tool },
    { "t5", "T5", "", kSchema, kOut, 0, echo_tool },
    { "t6", "T6", "", kSchema, kOut, 0, echo_tool },
};
const std::string_view kAllow[] = { "echo", "admin_only", "missing", "huge", "t5", "t6" };

void fixed_time(char* out, size_t cap) { snprintf(out, cap, "2026-11-22T08:00:00Z"); }
uint64_t g_now = 1000000000;
uint64_t now_ns() { return g_now; }

struct Fixture {
    Fixture() {
        config.version = "0.1.0";
        config.tools = kTools;
        config.allowlist = kAllow;
        config.now_rfc3339 = fixed_time;
        config.now_ns = now_ns;
        server = std::make_unique<mcp::Server>(config, limiter);
        EXPECT_TRUE(keys.add("op", mcp::Role::Operator, "operator-secret-key-1").ok());
        session.principal = *keys.authenticate("operator-secret-key-1");
    }
    std::string call(const std::string& msg) {
        std::vector<char> out(1 << 20);
        size_t n = server->handle(msg, session, out);
        return std::string(out.data(), n);
    }
    mcp::ServerConfig config;
    mcp::CallLimiter limiter { mcp::LimitConfig { 5, 1, 10 } };
    mcp::KeyStore keys;
    mcp::Session session;
    std::unique_ptr<mcp::Server> server;
};

struct Reply {
    std::string text;
    std::vector<json::Node> nodes = std::vector<json::Node>(20000);
    json::Value root;
    explicit Reply(std::string t) : text(std::move(t)) {
        auto d = json::Document::parse(text, nodes);
        EXPECT_TRUE(d.ok()) << text;
        if (d.ok()) {
            doc = *d;
            root = doc.root();
        }
    }
    json::Document doc;
};

} // namespace

TEST(McpServer, InitializeNegotiatesVersions) {
    Fixture f;
    Reply r(f.call(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
    EXPECT_EQ(r.root.find("id").as_int64(), 0) << "numeric id 0 echoed as a number";
    json::Value result = r.root.find("result");
    EXPECT_TRUE(result.find("protocolVersion").string_equals("2025-03-26"));
    EXPECT_TRUE(result.find("capabilities").find("tools").is_object());
    EXPECT_FALSE(result.find("capabilities").find("resources").valid()) << "only implemented capabilities";
    EXPECT_TRUE(result.find("serverInfo").find("name").string_equals("basalt"));
    Reply r2(f.call(R"({"jsonrpc":"2.0","id":"abc","method":"initialize","params":{"protocolVersion":"1999-01-01"}})"));
    EXPECT_TRUE(r2.root.find("id").string_equals("abc"));
    EXPECT_TRUE(r2.root.find("result").find("protocolVersion").string_equals("2025-11-25"));
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"), "") << "notifications get no reply";
    EXPECT_TRUE(f.session.initialized);
}

TEST(McpServer, JsonRpcErrors) {
    Fixture f;
    Reply parse(f.call("{\"jsonrpc\":\"2.0\",\"id\":1,"));
    EXPECT_EQ(parse.root.find("error").find("code").as_int64(), -32700);
    EXPECT_TRUE(parse.root.find("id").is_null());
    EXPECT_TRUE(parse.root.find("error").find("data").find("error").find("code").string_equals("validation_failed"));
    Reply bad(f.call(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"));
    EXPECT_EQ(bad.root.find("error").find("code").as_int64(), -32600);
    Reply float_id(f.call(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})"));
    EXPECT_EQ(float_id.root.find("error").find("code").as_int64(), -32600);
    Reply unknown(f.call(R"({"jsonrpc":"2.0","id":2,"method":"nope"})"));
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32601);
    Reply ping(f.call(R"({"jsonrpc":"2.0","id":3,"method":"ping"})"));
    EXPECT_TRUE(ping.root.find("result").is_object());
    Reply dup(f.call(R"({"jsonrpc":"2.0","id":4,"id":5,"method":"ping"})"));
    EXPECT_EQ(dup.root.find("error").find("code").as_int64(), -32700) << "duplicate keys are refused";
}

TEST(McpServer, ToolsListPagesThroughAllowlistedToolsOnly) {
    Fixture f;
    std::vector<std::string> names;
    std::string cursor;
    for (int page = 0; page < 10; ++page) {
        std::string params = cursor.empty() ? "{}" : "{\"cursor\":\"" + cursor + "\"}";
        Reply r(f.call("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":" + params + "}"));
        json::Value tools = r.root.find("result").find("tools");
        for (json::Value t = tools.first(); t.valid(); t = t.next_sibling()) {
            names.emplace_back(t.find("name").plain_string().value_or("?"));
            EXPECT_TRUE(t.find("inputSchema").is_object());
            EXPECT_TRUE(t.find("outputSchema").is_object());
        }
        json::Value next = r.root.find("result").find("nextCursor");
        if (!next.valid())
            break;
        cursor = std::string(next.plain_string().value_or(""));
    }
    EXPECT_EQ(names, (std::vector<std::string> { "echo", "admin_only", "missing", "huge", "t5", "t6" }));
    Reply bad(f.call(R"({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"x"}})"));
    EXPECT_EQ(bad.root.find("error").find("code").as_int64(), -32602);
}

TEST(McpServer, ToolsCallThroughThePolicy) {
    Fixture f;
    Reply ok(f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})"));
    json::Value result = ok.root.find("result");
    EXPECT_EQ(result.find("isError").as_bool(), false);
    EXPECT_TRUE(result.find("structuredContent").find("echo").string_equals("hi"));
    EXPECT_TRUE(result.find("content").at(0).find("type").string_equals("text"));

    Reply unknown(f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hidden","arguments":{}}})"));
    json::Value env = unknown.root.find("error").find("data");
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32602);
    EXPECT_EQ(env.find("ok").as_bool(), false);
    EXPECT_TRUE(env.find("error").find("code").string_equals("validation_unknown_tool")) << unknown.text;
    EXPECT_TRUE(env.find("request_id").string_equals("2"));
    EXPECT_TRUE(env.find("timestamp").string_equals("2026-11-22T08:00:00Z"));

    Reply role(f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_only","arguments":{}}})"));
    env = role.root.find("error").find("data");
    EXPECT_TRUE(env.find("error").find("code").string_equals("auth_insufficient_role"));
    EXPECT_TRUE(env.find("error").find("details").find("role").string_equals("operator"));
    EXPECT_TRUE(env.find("error").find("details").find("required").string_equals("kernel:admin"));

    Reply failed(f.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"missing","arguments":{}}})"));
    result = failed.root.find("result");
    EXPECT_EQ(result.find("isError").as_bool(), true);
    EXPECT_TRUE(result.find("structuredContent").find("error").find("code").string_equals("not_found"));

    Reply huge(f.call(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"huge","arguments":{}}})"));
    EXPECT_TRUE(huge.root.find("result").find("structuredContent").find("error").find("code").string_equals(
        "limit_output_exceeded"));

    f.session.principal = nullptr;
    Reply anon(f.call(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{}}})"));
    EXPECT_TRUE(anon.root.find("error").find("data").find("error").find("code").string_equals("auth_missing_api_key"));
}

TEST(McpServer, RateLimitIsEnforcedBeforeTheToolRuns) {
    Fixture f; // burst 5, refill 1/s
    int refused = 0;
    for (int i = 0; i < 8; ++i) {
        Reply r(f.call("{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(i) +
                       ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{}}}"));
        json::Value e = r.root.find("error");
        if (e.valid()) {
            EXPECT_EQ(e.find("code").as_int64(), -32002);
            EXPECT_TRUE(e.find("data").find("error").find("code").string_equals("limit_rate_exceeded"));
            ++refused;
        }
    }
    EXPECT_EQ(refused, 3);
    g_now += 2000000000; // two seconds later: two more tokens
    Reply later(f.call(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}})"));
    EXPECT_TRUE(later.root.find("result").valid());
}

TEST(McpServer, OversizedLineGetsAnError) {
    Fixture f;
    std::vector<char> out(4096);
    size_t n = f.server->oversized(2000000, out);
    Reply r(std::string(out.data(), n));
    EXPECT_EQ(r.root.find("error").find("code").as_int64(), -32600);
    EXPECT_TRUE(r.root.find("error").find("data").find("error").find("details").find("reason").string_equals(
        "message_too_long"));
}

// The MCP dispatcher from outside: JSON-RPC framing rules, version negotiation, paginated
// tools/list, tools/call through the policy (allowlist, scopes, limits) and the envelope.
#include <json/json.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include "support/mcp_reply.h"

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

bool status_resource(json::Writer& w, mcp::ToolError&) {
    w.key("uptime_ms").number(uint64_t(42));
    return true;
}
bool secret_resource(json::Writer& w, mcp::ToolError&) {
    w.key("entries").begin_array().end_array();
    return true;
}
const mcp::Resource kResources[] = {
    { "test://status", "status", "Status", "A status snapshot", mcp::kKernelRead, "3", status_resource },
    { "test://audit", "audit", "Audit", "Needs audit:read", mcp::kAuditRead, "1", secret_resource },
    { "test://hidden", "hidden", "Hidden", "Not allowlisted", 0, "1", status_resource },
};
const std::string_view kResourceAllow[] = { "test://status", "test://audit" };


struct Fixture {
    Fixture() {
        config.version = "0.1.0";
        config.tools = kTools;
        config.allowlist = kAllow;
        hooks.now_rfc3339_fn = fixed_time;
        hooks.now_ns_fn = now_ns;
        config.resources = kResources;
        config.resource_allowlist = kResourceAllow;
        config.keys = &keys;
        config.source_commit = "abc1234";
        hooks.audit_fn = record_event;
        g_events.clear();
        g_event_names.clear();
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
        EXPECT_TRUE(keys.add("op", mcp::Role::Operator, "operator-secret-key-1").ok());
        EXPECT_TRUE(keys.add("root", mcp::Role::Admin, "admin-secret-key-000001").ok());
        session.principal = *keys.authenticate("operator-secret-key-1");
    }
    std::string call(const std::string& msg) {
        std::vector<char> out(1 << 20);
        size_t n = server->handle(msg, session, out);
        return std::string(out.data(), n);
    }
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter { mcp::LimitConfig { 5, 1, 10 } };
    mcp::KeyStore keys;
    mcp::Session session;
    std::unique_ptr<mcp::Server> server;
};

} // namespace

TEST(McpServer, InitializeNegotiatesVersions) {
    Fixture f;
    Reply r(f.call(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
    EXPECT_EQ(r.root.find("id").as_int64(), 0) << "numeric id 0 echoed as a number";
    json::Value result = r.root.find("result");
    EXPECT_TRUE(result.find("protocolVersion").string_equals("2025-03-26"));
    EXPECT_TRUE(result.find("capabilities").find("tools").is_object());
    EXPECT_TRUE(result.find("capabilities").find("resources").is_object());
    EXPECT_TRUE(result.find("capabilities").find("logging").is_object());
    EXPECT_FALSE(result.find("capabilities").find("prompts").valid()) << "only implemented capabilities";
    EXPECT_TRUE(result.find("serverInfo").find("name").string_equals("basalt"));
    Reply r2(f.call(R"({"jsonrpc":"2.0","id":"abc","method":"initialize","params":{"protocolVersion":"1999-01-01"}})"));
    EXPECT_TRUE(r2.root.find("id").string_equals("abc"));
    EXPECT_TRUE(r2.root.find("result").find("protocolVersion").string_equals("2025-11-25"));
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"), "") << "notifications get no reply";
    EXPECT_TRUE(f.session.initialized);
}

// 2026-07-28: no handshake; each request names its revision and the client's capabilities.
TEST(McpServer, Revision20260728IsServedPerRequest) {
    Fixture f;
    const std::string meta =
        R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";
    Reply d(f.call(R"({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{)" + meta + "}}"));
    json::Value dr = d.root.find("result");
    EXPECT_TRUE(dr.find("resultType").string_equals("complete"));
    EXPECT_TRUE(dr.find("supportedVersions").at(0).string_equals("2026-07-28"));
    EXPECT_EQ(dr.find("supportedVersions").size(), 1u) << "handshake revisions are reached through initialize";
    EXPECT_TRUE(dr.find("capabilities").find("tools").is_object());
    EXPECT_TRUE(dr.find("_meta").find("io.modelcontextprotocol/serverInfo").find("name").string_equals("basalt"));
    EXPECT_TRUE(dr.find("ttlMs").as_uint64().has_value());
    EXPECT_FALSE(f.session.initialized) << "nothing about the line changed";

    Reply list(f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{)" + meta + "}}"));
    EXPECT_TRUE(list.root.find("result").find("resultType").string_equals("complete"));
    EXPECT_TRUE(list.root.find("result").find("cacheScope").is_string());
    EXPECT_FALSE(list.root.find("result").find("nextCursor").valid()) << "one page holds every tool";
    Reply legacy_list(f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"));
    EXPECT_FALSE(legacy_list.root.find("result").find("resultType").valid()) << "2025 results keep their shape";
    EXPECT_FALSE(legacy_list.root.find("result").find("ttlMs").valid());

    Reply call(
        f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},)" +
               meta + "}}"));
    EXPECT_TRUE(call.root.find("result").find("resultType").string_equals("complete"));
    EXPECT_TRUE(call.root.find("result").find("structuredContent").find("echo").string_equals("hi"));
    Reply failed(f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"missing","arguments":{},)" +
                        meta + "}}"));
    EXPECT_TRUE(failed.root.find("result").find("resultType").string_equals("complete"));
    EXPECT_EQ(failed.root.find("result").find("isError").as_bool(), true);
    EXPECT_TRUE(failed.tool_error().find("error").find("code").string_equals("not_found")) << failed.text;

    Reply read(
        f.call(R"({"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://status",)" + meta + "}}"));
    EXPECT_TRUE(read.root.find("result").find("cacheScope").string_equals("private"));
    EXPECT_EQ(read.root.find("result").find("ttlMs").as_uint64(), 0u);
    Reply unknown(
        f.call(R"({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://none",)" + meta + "}}"));
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32602) << "-32002 is retired in 2026-07-28";
    Reply unknown_legacy(
        f.call(R"({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://none"}})"));
    EXPECT_EQ(unknown_legacy.root.find("error").find("code").as_int64(), -32002);

    for (const char* removed : { "ping", "logging/setLevel", "initialize" }) {
        Reply r(f.call(std::string(R"({"jsonrpc":"2.0","id":6,"method":")") + removed +
                       R"(","params":{"level":"info",)" + meta + "}}"));
        EXPECT_EQ(r.root.find("error").find("code").as_int64(), -32601) << removed;
    }
}

TEST(McpServer, Revision20260728EnvelopeErrors) {
    Fixture f;
    Reply other(f.call(
        R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}}})"));
    json::Value e = other.root.find("error");
    EXPECT_EQ(e.find("code").as_int64(), -32022);
    EXPECT_TRUE(e.find("data").find("supported").at(0).string_equals("2026-07-28"));
    EXPECT_TRUE(e.find("data").find("requested").string_equals("2030-01-01"));
    EXPECT_TRUE(e.find("data").find("error").find("code").string_equals("validation_failed")) << "and the envelope";
    EXPECT_TRUE(e.find("data").find("timestamp").string_equals("2026-11-22T08:00:00Z"));

    Reply no_caps(f.call(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})"));
    EXPECT_EQ(no_caps.root.find("error").find("code").as_int64(), -32602);
    EXPECT_TRUE(no_caps.root.find("error").find("data").find("error").find("details").find("reason").string_equals(
        "missing_meta"));
    Reply bare_discover(f.call(R"({"jsonrpc":"2.0","id":3,"method":"server/discover"})"));
    EXPECT_EQ(bare_discover.root.find("error").find("code").as_int64(), -32602);
    Reply bad_level(f.call(
        R"({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}})"));
    EXPECT_EQ(bad_level.root.find("error").find("code").as_int64(), -32602);
    // Authentication is per request in both eras: a bad key is refused before anything runs.
    Reply bad_key(f.call(
        R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.basalt/api-key":"wrong-key-wrong-key"}}})"));
    EXPECT_EQ(bad_key.root.find("error").find("code").as_int64(), -32001);
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

TEST(McpServer, ToolsListServesEveryToolInOnePageByDefault) {
    Fixture f;
    Reply r(f.call(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})"));
    EXPECT_EQ(r.root.find("result").find("tools").size(), 6u) << r.text;
    EXPECT_FALSE(r.root.find("result").find("nextCursor").valid()) << "clients that read one page see every tool";
}

TEST(McpServer, ToolsListPagesThroughAllowlistedToolsOnly) {
    Fixture f;
    f.config.page_size = 4; // as the `list_page=` boot argument sets it
    f.server = std::make_unique<mcp::Server>(f.config, f.limiter, f.hooks);
    std::vector<std::string> names;
    std::string cursor;
    int pages = 0;
    for (int page = 0; page < 10; ++page) {
        ++pages;
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
    EXPECT_EQ(pages, 2);
    Reply bad(f.call(R"({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"x"}})"));
    EXPECT_EQ(bad.root.find("error").find("code").as_int64(), -32602);
}

TEST(McpServer, ToolsCallThroughThePolicy) {
    Fixture f;
    Reply ok(
        f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})"));
    json::Value result = ok.root.find("result");
    EXPECT_EQ(result.find("isError").as_bool(), false);
    EXPECT_TRUE(result.find("structuredContent").find("echo").string_equals("hi"));
    EXPECT_TRUE(result.find("content").at(0).find("type").string_equals("text"));

    Reply unknown(
        f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hidden","arguments":{}}})"));
    json::Value env = unknown.root.find("error").find("data");
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32602);
    EXPECT_EQ(env.find("ok").as_bool(), false);
    EXPECT_TRUE(env.find("error").find("code").string_equals("validation_unknown_tool")) << unknown.text;
    EXPECT_TRUE(env.find("request_id").string_equals("2"));
    EXPECT_TRUE(env.find("timestamp").string_equals("2026-11-22T08:00:00Z"));

    Reply role(
        f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_only","arguments":{}}})"));
    env = role.root.find("error").find("data");
    EXPECT_TRUE(env.find("error").find("code").string_equals("auth_insufficient_role"));
    EXPECT_TRUE(env.find("error").find("details").find("role").string_equals("operator"));
    EXPECT_TRUE(env.find("error").find("details").find("required").string_equals("kernel:admin"));

    Reply failed(
        f.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"missing","arguments":{}}})"));
    EXPECT_TRUE(failed.tool_error().find("error").find("code").string_equals("not_found")) << failed.text;

    Reply huge(f.call(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"huge","arguments":{}}})"));
    EXPECT_TRUE(huge.tool_error().find("error").find("code").string_equals("limit_output_exceeded")) << huge.text;

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
            EXPECT_EQ(e.find("code").as_int64(), -32003);
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

TEST(McpServer, ResourcesAreSnapshotsBehindTheAllowlistAndScopes) {
    Fixture f;
    Reply list(f.call(R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})"));
    json::Value resources = list.root.find("result").find("resources");
    ASSERT_EQ(resources.size(), 2u) << list.text;
    EXPECT_TRUE(resources.at(0).find("uri").string_equals("test://status"));
    EXPECT_TRUE(resources.at(1).find("uri").string_equals("test://audit"));

    Reply read(f.call(R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://status"}})"));
    json::Value content = read.root.find("result").find("contents").at(0);
    EXPECT_TRUE(content.find("uri").string_equals("test://status"));
    EXPECT_TRUE(content.find("mimeType").string_equals("application/json"));
    char text[512];
    auto n = content.find("text").string_into(text);
    ASSERT_TRUE(n.ok());
    Reply snapshot(std::string(text, *n));
    EXPECT_TRUE(snapshot.root.find("version").string_equals("3"));
    EXPECT_TRUE(snapshot.root.find("generated_at").string_equals("2026-11-22T08:00:00Z"));
    EXPECT_TRUE(snapshot.root.find("source_commit").string_equals("abc1234"));
    EXPECT_EQ(snapshot.root.find("uptime_ms").as_int64(), 42);

    Reply hidden(f.call(R"({"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://hidden"}})"));
    EXPECT_EQ(hidden.root.find("error").find("code").as_int64(), -32002) << "MCP: resource not found";
    EXPECT_TRUE(
        hidden.root.find("error").find("data").find("error").find("code").string_equals("validation_unknown_tool"));

    Reply denied(f.call(R"({"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://audit"}})"));
    EXPECT_TRUE(
        denied.root.find("error").find("data").find("error").find("code").string_equals("auth_insufficient_role"))
        << "operator lacks audit:read";
    Reply admin(f.call(
        R"({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://audit","_meta":{"io.basalt/api-key":"admin-secret-key-000001"}}})"));
    EXPECT_TRUE(admin.root.find("result").find("contents").is_array()) << admin.text;

    Reply templates(f.call(R"({"jsonrpc":"2.0","id":6,"method":"resources/templates/list"})"));
    EXPECT_TRUE(templates.root.find("result").find("resourceTemplates").is_array());
}

TEST(McpServer, ApiKeysInMetaSelectThePrincipal) {
    Fixture f;
    const char* admin_call =
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_only","arguments":{},"_meta":{"io.basalt/api-key":"admin-secret-key-000001"}}})";
    Reply ok(f.call(admin_call));
    EXPECT_EQ(ok.root.find("result").find("isError").as_bool(), false) << ok.text;
    Reply bad(f.call(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.basalt/api-key":"admin-secret-key-000002"}}})"));
    EXPECT_EQ(bad.root.find("error").find("code").as_int64(), -32001);
    EXPECT_TRUE(bad.root.find("error").find("data").find("error").find("code").string_equals("auth_invalid_api_key"));
    EXPECT_EQ(bad.text.find("admin-secret"), std::string::npos) << "a presented key is never echoed";
    Reply not_string(f.call(
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.basalt/api-key":7}}})"));
    EXPECT_TRUE(
        not_string.root.find("error").find("data").find("error").find("code").string_equals("auth_invalid_api_key"));

    // A key presented with initialize holds for the session.
    f.session.principal = nullptr;
    Reply anon(f.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}})"));
    EXPECT_TRUE(anon.root.find("error").find("data").find("error").find("code").string_equals("auth_missing_api_key"));
    f.call(
        R"({"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","_meta":{"io.basalt/api-key":"operator-secret-key-1"}}})");
    ASSERT_NE(f.session.principal, nullptr);
    EXPECT_EQ(f.session.principal->role, mcp::Role::Operator);
    Reply now_ok(f.call(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{}}})"));
    EXPECT_EQ(now_ok.root.find("result").find("isError").as_bool(), false);
}

TEST(McpServer, ArgumentsAreValidatedAgainstTheSchemaBeforeTheToolRuns) {
    Fixture f;
    std::string long_text(65, 'a');
    Reply too_long(
        f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":")" +
               long_text + R"("}}})"));
    json::Value env = too_long.root.find("error").find("data");
    EXPECT_EQ(too_long.root.find("error").find("code").as_int64(), -32602);
    EXPECT_TRUE(env.find("error").find("code").string_equals("validation_failed")) << too_long.text;
    EXPECT_TRUE(env.find("error").find("details").find("reason").string_equals("too_long")) << too_long.text;
    EXPECT_TRUE(env.find("error").find("details").find("path").string_equals("/text")) << too_long.text;
    Reply extra(
        f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"txt":"x"}}})"));
    EXPECT_TRUE(extra.root.find("error").find("data").find("error").find("details").find("reason").string_equals(
        "additional_property"))
        << extra.text;
    Reply wrong_type(
        f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":5}}})"));
    EXPECT_TRUE(
        wrong_type.root.find("error").find("data").find("error").find("details").find("reason").string_equals("type"));
    Reply ok(
        f.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}})"));
    EXPECT_EQ(ok.root.find("result").find("isError").as_bool(), false);
}

// SEP-1303: from 2025-11-25 a schema failure is a tool execution error the model can read and
// correct; sessions on 2025-06-18 or older keep JSON-RPC -32602. Unknown tools stay -32602.
TEST(McpServer, SchemaFailuresAreToolErrorsFrom20251125On) {
    const std::string bad_call =
        R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":5}}})";
    for (const char* version : { "2025-11-25", "2025-06-18", "2025-03-26" }) {
        Fixture f;
        f.call(std::string(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")") + version +
               R"("}})");
        ASSERT_STREQ(f.session.protocol_version, version);
        Reply r(f.call(bad_call));
        if (std::string_view(version) == "2025-11-25") {
            ASSERT_FALSE(r.root.find("error").valid()) << r.text;
            json::Value result = r.root.find("result");
            json::Value env = r.tool_error();
            EXPECT_EQ(env.find("ok").as_bool(), false);
            EXPECT_TRUE(env.find("error").find("code").string_equals("validation_failed")) << r.text;
            EXPECT_TRUE(env.find("error").find("details").find("reason").string_equals("type")) << r.text;
            EXPECT_TRUE(env.find("error").find("details").find("path").string_equals("/text")) << r.text;
            EXPECT_TRUE(env.find("request_id").is_string());
            char buf[1024];
            auto n = result.find("content").at(0).find("text").string_into(buf);
            ASSERT_TRUE(n.ok()) << r.text;
            const std::string text(buf, *n);
            EXPECT_EQ(text.rfind("Invalid arguments for tool 'echo': /text: ", 0), 0u) << text;
            EXPECT_NE(text.find("(schema keyword 'type')"), std::string::npos) << text;
            EXPECT_NE(text.find("\"code\":\"validation_failed\""), std::string::npos) << "the envelope too: " << text;
        } else {
            EXPECT_EQ(r.root.find("error").find("code").as_int64(), -32602) << version << ": " << r.text;
            EXPECT_TRUE(
                r.root.find("error").find("data").find("error").find("code").string_equals("validation_failed"));
        }
        Reply unknown(
            f.call(R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope","arguments":{}}})"));
        EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32602) << version;
        EXPECT_EQ(g_events.back().outcome, mcp::AuditOutcome::Deny);
    }
    Fixture f;
    Reply modern(f.call(
        R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"txt":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})"));
    EXPECT_TRUE(modern.root.find("result").find("resultType").string_equals("complete")) << modern.text;
    EXPECT_TRUE(modern.tool_error().find("error").find("details").find("reason").string_equals("additional_property"))
        << modern.text;
}

TEST(McpServer, EveryDecisionIsAudited) {
    Fixture f;
    f.call(
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"secret-value"}}})");
    f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}})");
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_only","arguments":{}}})");
    f.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"missing","arguments":{}}})");
    f.call(R"({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://status"}})");
    f.call(
        R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.basalt/api-key":"wrong-key-wrong-key"}}})");
    ASSERT_EQ(g_events.size(), 6u);
    EXPECT_EQ(g_events[0].outcome, mcp::AuditOutcome::Allow);
    EXPECT_NE(g_events[0].args_hash, 0u) << "arguments are recorded as a hash";
    EXPECT_EQ(g_event_names[0], "echo");
    EXPECT_EQ(g_events[1].outcome, mcp::AuditOutcome::Deny);
    EXPECT_STREQ(g_events[1].code, "validation_unknown_tool");
    EXPECT_STREQ(g_events[2].code, "auth_insufficient_role");
    EXPECT_EQ(g_events[3].outcome, mcp::AuditOutcome::Error);
    EXPECT_STREQ(g_events[3].code, "not_found");
    EXPECT_EQ(g_events[4].kind, mcp::AuditKind::Resource);
    EXPECT_EQ(g_event_names[4], "test://status");
    EXPECT_EQ(g_events[5].kind, mcp::AuditKind::Auth);
    EXPECT_STREQ(g_events[5].code, "auth_invalid_api_key");
    for (const auto& name : g_event_names)
        EXPECT_EQ(name.find("secret"), std::string::npos);
}

TEST(McpServer, LoggingFollowsTheRequestedLevel) {
    Fixture f;
    std::vector<char> out(4096);
    EXPECT_EQ(f.server->log_message(f.session, mcp::LogLevel::Error, "kernel", "boom", out), 0u)
        << "nothing before logging/setLevel";
    Reply set(f.call(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}})"));
    EXPECT_TRUE(set.root.find("result").is_object());
    EXPECT_EQ(f.server->log_message(f.session, mcp::LogLevel::Info, "kernel", "chatter", out), 0u);
    size_t n = f.server->log_message(f.session, mcp::LogLevel::Error, "kernel", "disk \"on fire\"", out);
    ASSERT_GT(n, 0u);
    Reply note(std::string(out.data(), n));
    EXPECT_TRUE(note.root.find("method").string_equals("notifications/message"));
    EXPECT_FALSE(note.root.find("id").valid());
    EXPECT_TRUE(note.root.find("params").find("level").string_equals("error"));
    EXPECT_TRUE(note.root.find("params").find("data").string_equals("disk \"on fire\""));
    Reply bad(f.call(R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"loud"}})"));
    EXPECT_EQ(bad.root.find("error").find("code").as_int64(), -32602);
}

namespace {
std::vector<mcp::PendingCall> g_pending;
std::vector<std::string> g_cancelled;
bool g_refuse_start = false;
bool start_async(const mcp::Tool&, const json::Value& args, const mcp::PendingCall& call, mcp::ToolError& err) {
    if (g_refuse_start) {
        err = { mcp::ErrorCode::LimitConcurrencyExceeded, "busy" };
        return false;
    }
    EXPECT_TRUE(args.is_object());
    g_pending.push_back(call);
    return true;
}
void cancel_async(std::string_view raw, bool is_string, uint32_t) {
    g_cancelled.push_back(std::string(is_string ? "s:" : "n:") + std::string(raw));
}
// The fixture's host runs calls itself (start_async), with nothing pending or cancelled yet.
void run_calls_async(Fixture& f) {
    f.hooks.start_call = start_async;
    f.hooks.cancel_call = cancel_async;
    g_pending.clear();
    g_cancelled.clear();
    g_refuse_start = false;
}
} // namespace

TEST(McpServer, AsynchronousCallsAnswerLaterWithProgressAndCancellation) {
    Fixture f;
    run_calls_async(f);
    EXPECT_EQ(
        f.call(
            R"({"jsonrpc":"2.0","id":"a\"1","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":"tok-1"}}})"),
        "")
        << "no reply until the call finishes";
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}})"), "");
    ASSERT_EQ(g_pending.size(), 2u);
    EXPECT_TRUE(g_pending[0].has_progress);
    EXPECT_FALSE(g_pending[1].has_progress);

    std::vector<char> out(8192);
    size_t n = f.server->progress(g_pending[0], 3, 10, "step 3", out);
    Reply prog(std::string(out.data(), n));
    EXPECT_TRUE(prog.root.find("method").string_equals("notifications/progress"));
    EXPECT_TRUE(prog.root.find("params").find("progressToken").string_equals("tok-1"));
    EXPECT_EQ(prog.root.find("params").find("progress").as_int64(), 3);
    EXPECT_EQ(prog.root.find("params").find("total").as_int64(), 10);
    EXPECT_EQ(f.server->progress(g_pending[1], 1, 2, "", out), 0u) << "no token, no progress";

    n = f.server->finish_call(g_pending[0], true, R"({"echo":"x"})", {}, false, out);
    Reply done(std::string(out.data(), n));
    EXPECT_TRUE(done.root.find("id").string_equals("a\"1")) << done.text;
    EXPECT_TRUE(done.root.find("result").find("structuredContent").find("echo").string_equals("x"));

    // Cancellation reaches the host by id; a cancelled call is not answered but is audited.
    f.call(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}})");
    ASSERT_EQ(g_cancelled.size(), 1u);
    EXPECT_EQ(g_cancelled[0], "n:7");
    EXPECT_TRUE(g_pending[1].matches("7", false, 0));
    EXPECT_FALSE(g_pending[1].matches("7", false, 1)) << "ids are scoped to their session";
    size_t before = g_events.size();
    g_pending[1].token_id = 77;
    EXPECT_EQ(f.server->finish_call(g_pending[1], false, {}, {}, true, out), 0u);
    ASSERT_EQ(g_events.size(), before + 1);
    EXPECT_STREQ(g_events.back().code, "cancelled");
    EXPECT_EQ(g_events.back().token_id, 77u) << "the audit names the execution token";

    // Failures carry the envelope; the limiter slot is given back either way.
    f.call(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
    n = f.server->finish_call(g_pending.back(), false, {}, { mcp::ErrorCode::LimitTimeExceeded, "too slow" }, false,
                              out);
    Reply slow(std::string(out.data(), n));
    EXPECT_EQ(slow.root.find("id").as_int64(), 8);
    EXPECT_TRUE(slow.tool_error().find("error").find("code").string_equals("limit_time_exceeded")) << slow.text;

    // Not now, later: `unavailable` says when to try again and how far the store's recovery is,
    // as JSON numbers.
    f.call(R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
    mcp::ToolError later { mcp::ErrorCode::Unavailable, "not yet", "recovering" };
    later.retry_after_ms = 1000;
    later.replayed_so_far = 4096;
    n = f.server->finish_call(g_pending.back(), false, {}, later, false, out);
    Reply unavailable(std::string(out.data(), n));
    json::Value details = unavailable.tool_error().find("error").find("details");
    EXPECT_TRUE(unavailable.tool_error().find("error").find("code").string_equals("unavailable")) << unavailable.text;
    EXPECT_TRUE(details.find("reason").string_equals("recovering")) << unavailable.text;
    EXPECT_EQ(details.find("retry_after_ms").as_int64(), 1000) << unavailable.text;
    EXPECT_EQ(details.find("replayed_so_far").as_int64(), 4096) << unavailable.text;

    g_refuse_start = true;
    Reply busy(f.call(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}})"));
    EXPECT_TRUE(busy.tool_error().find("error").find("code").string_equals("limit_concurrency_exceeded")) << busy.text;
}

// A call whose tool changed stored data is answered as done only if the host made the change and
// its audit record durable (Host::audit true); otherwise the answer is storage_failed, and the
// record still names the call's own outcome.
namespace {
bool g_disk_failed = false;
bool audit_durable(const mcp::AuditEvent&) { return !g_disk_failed; }
} // namespace

TEST(McpServer, AnAnswerReportsAChangeOnlyOnceItIsDurable) {
    Fixture f;
    run_calls_async(f);
    f.hooks.audit_durable_fn = audit_durable;
    std::vector<char> out(8192);
    g_disk_failed = false;
    f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}})");
    ASSERT_EQ(g_pending.size(), 1u);
    Reply stored(std::string(out.data(), f.server->finish_call(g_pending[0], true, R"({"echo":"a"})", {}, false, out)));
    EXPECT_TRUE(stored.root.find("result").find("structuredContent").find("echo").string_equals("a")) << stored.text;

    g_disk_failed = true;
    f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}})");
    ASSERT_EQ(g_pending.size(), 2u);
    const size_t before = g_events.size();
    Reply lost(std::string(out.data(), f.server->finish_call(g_pending[1], true, R"({"echo":"b"})", {}, false, out)));
    EXPECT_EQ(lost.root.find("id").as_int64(), 2);
    json::Value error = lost.tool_error().find("error");
    EXPECT_TRUE(error.find("code").string_equals("internal_error")) << lost.text;
    EXPECT_TRUE(error.find("details").find("reason").string_equals("storage_failed")) << lost.text;
    EXPECT_EQ(lost.text.find("echo"), std::string::npos) << "nothing of the tool's result is reported: " << lost.text;
    ASSERT_EQ(g_events.size(), before + 1) << "audited once";
    // A failed call's answer was an error already: it stays the tool's own.
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
    Reply slow(
        std::string(out.data(), f.server->finish_call(g_pending.back(), false, {},
                                                      { mcp::ErrorCode::LimitTimeExceeded, "too slow" }, false, out)));
    EXPECT_TRUE(slow.tool_error().find("error").find("code").string_equals("limit_time_exceeded")) << slow.text;
    g_disk_failed = false;
}

// A host that answers a change once it is durable without waiting for it (the kernel's bridges)
// closes the call first (checked and audited, once) and answers it later: the caller's
// concurrency slot stays taken until then, and the answer follows the durability it learnt meanwhile.
TEST(McpServer, AClosedCallIsAnsweredLaterAndHoldsItsSlotUntilThen) {
    Fixture f;
    run_calls_async(f);
    std::vector<char> out(8192);
    const uint16_t who = f.session.principal->id;
    f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}})");
    f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}})");
    ASSERT_EQ(g_pending.size(), 2u);
    EXPECT_EQ(f.limiter.in_flight(who), 2u);
    const size_t before = g_events.size();
    mcp::Server::Closed stored = f.server->close_call(g_pending[0], true, R"({"echo":"a"})", {});
    mcp::Server::Closed lost = f.server->close_call(g_pending[1], true, R"({"echo":"b"})", {});
    EXPECT_TRUE(stored.ok && stored.durable && lost.ok);
    EXPECT_EQ(g_events.size(), before + 2) << "each call audited when closed";
    EXPECT_EQ(f.limiter.in_flight(who), 2u) << "a closed call not yet answered still counts against its caller";

    Reply a(std::string(out.data(), f.server->answer_call(g_pending[0], stored, R"({"echo":"a"})", out)));
    EXPECT_TRUE(a.root.find("result").find("structuredContent").find("echo").string_equals("a")) << a.text;
    EXPECT_EQ(f.limiter.in_flight(who), 1u);
    lost.durable = false; // the commit carrying it failed meanwhile
    Reply b(std::string(out.data(), f.server->answer_call(g_pending[1], lost, R"({"echo":"b"})", out)));
    EXPECT_EQ(b.root.find("id").as_int64(), 2);
    EXPECT_TRUE(b.tool_error().find("error").find("details").find("reason").string_equals("storage_failed")) << b.text;
    EXPECT_EQ(b.text.find("echo"), std::string::npos) << b.text;
    EXPECT_EQ(f.limiter.in_flight(who), 0u);
    EXPECT_EQ(g_events.size(), before + 2) << "answering audits nothing more";

    // A malformed result (not UTF-8) is refused when closed, and its answer is that error.
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
    const std::string_view malformed = "{\"echo\":\"\xff\"}";
    mcp::Server::Closed bad = f.server->close_call(g_pending.back(), true, malformed, {});
    EXPECT_FALSE(bad.ok);
    Reply c(std::string(out.data(), f.server->answer_call(g_pending.back(), bad, malformed, out)));
    EXPECT_TRUE(c.tool_error().find("error").find("code").string_equals("internal_error")) << c.text;
}

// A message with more values than the Server's own arena (4,096) is parsed again in one the host
// lends for it, as large as it can need and no larger than kMaxMessageValues, given back once the
// message is answered; without the host's arenas it is refused as before.
namespace {
size_t g_arenas_taken = 0, g_arenas_given_back = 0, g_arena_nodes = 0;
json::Node* take_arena(size_t count) {
    ++g_arenas_taken;
    g_arena_nodes = count;
    return new json::Node[count];
}
void give_back_arena(json::Node* nodes) {
    ++g_arenas_given_back;
    delete[] nodes;
}
std::string ping_carrying(size_t values) {
    std::string msg = R"({"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"x":[)";
    for (size_t i = 0; i < values; ++i)
        msg += i ? ",0.5" : "0.5";
    return msg + "]}}}";
}
} // namespace

TEST(McpServer, LargeMessagesParseInAnArenaLentForThem) {
    Fixture f;
    std::string big = ping_carrying(50000); // a 500-row x 100-d vector batch's worth
    Reply refused(f.call(big));
    EXPECT_EQ(refused.root.find("error").find("code").as_int64(), -32700);
    EXPECT_TRUE(refused.root.find("error").find("data").find("error").find("details").find("reason").string_equals(
        "arena_full"));

    f.hooks.alloc_nodes_fn = take_arena;
    f.hooks.free_nodes_fn = give_back_arena;
    g_arenas_taken = g_arenas_given_back = 0;
    Reply served(f.call(big));
    EXPECT_TRUE(served.root.find("result").is_object()) << served.text;
    EXPECT_EQ(g_arenas_taken, 1u);
    EXPECT_EQ(g_arenas_given_back, 1u) << "given back once answered";
    EXPECT_GE(g_arena_nodes, 50004u);
    EXPECT_LE(g_arena_nodes, 50010u) << "sized by the values the text can hold, not by its bytes";
    EXPECT_NE(f.call(ping_carrying(100)).find("\"result\""), std::string::npos) << "small messages take no arena";
    EXPECT_EQ(g_arenas_taken, 1u);

    Reply too_many(f.call(ping_carrying(mcp::Server::kMaxMessageValues)));
    EXPECT_TRUE(too_many.root.find("error").find("data").find("error").find("details").find("reason").string_equals(
        "arena_full"));
    EXPECT_EQ(g_arena_nodes, mcp::Server::kMaxMessageValues) << "never past the ceiling";
    EXPECT_EQ(g_arenas_given_back, g_arenas_taken);
}

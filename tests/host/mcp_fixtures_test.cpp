// The dispatcher with the conformance suite's fixtures (mcp/fixtures), configured as the kernel
// does in its test profile: tools that write their own content, resources with text and blob
// contents, a resource template, subscriptions, prompts and completion; and the gating rules
// (every caller holds the fixtures' scope in the profile, nobody unauthenticated otherwise).
#include <json/json.h>
#include <mcp/fixtures/conformance.h>
#include <mcp/policy/roles.h>
#include <mcp/schema/validator.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include "support/mcp_reply.h"

#include <memory>
#include <string>
#include <vector>

namespace {

namespace fx = mcp::fixtures;

constexpr const char* kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

bool kernel_like(const json::Value&, json::Writer& w, mcp::ToolError&) {
    w.begin_object().key("secret").string("kernel").end_object();
    return true;
}
const mcp::Tool kKernelTool { "kernel_info",
                              "Kernel",
                              "Needs kernel:read",
                              R"({"type":"object","properties":{},"additionalProperties":false})",
                              R"({"type":"object"})",
                              mcp::kKernelRead,
                              kernel_like };

// The server as the kernel builds it with profile=conformance (or, with `profile` false, the
// default profile: no fixtures, nobody holds their scope).
struct Fixture {
    explicit Fixture(bool profile = true, bool include_kernel_tool = true) {
        if (profile) {
            for (const auto& t : fx::tools())
                tools.push_back(t);
            for (const auto& t : fx::tools())
                allow.emplace_back(t.name);
            for (const auto& r : fx::resources())
                resource_allow.emplace_back(r.uri);
            for (const auto& t : fx::resource_templates())
                resource_allow.emplace_back(t.uri_template);
            for (const auto& p : fx::prompts())
                prompt_allow.emplace_back(p.name);
            config.resources = fx::resources();
            config.resource_templates = fx::resource_templates();
            config.prompts = fx::prompts();
            config.anonymous_scopes = mcp::kConformanceFixtures;
            config.page_size = 32;
        }
        if (include_kernel_tool) {
            tools.push_back(kKernelTool);
            allow.emplace_back("kernel_info");
        }
        config.tools = tools;
        config.allowlist = allow;
        config.resource_allowlist = resource_allow;
        config.prompt_allowlist = prompt_allow;
        config.subscriptions = true;
        hooks.now_rfc3339_fn = fixed_time;
        hooks.now_ns_fn = now_ns;
        config.source_commit = "abc1234";
        hooks.audit_fn = record_event;
        g_events.clear();
        g_event_names.clear();
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
    }
    std::string call(const std::string& msg) {
        std::vector<char> out(1 << 20);
        size_t n = server->handle(msg, session, out);
        return std::string(out.data(), n);
    }
    std::string request(const std::string& method, const std::string& params = "{}", int id = 1) {
        return call(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" +
                    params + "}");
    }
    std::vector<mcp::Tool> tools;
    std::vector<std::string_view> allow, resource_allow, prompt_allow;
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter { mcp::LimitConfig { 100, 100, 10 } };
    mcp::Session session; // anonymous: the suite sends no credentials
    std::unique_ptr<mcp::Server> server;
};

std::string str(const json::Value& v) {
    char buf[4096];
    auto n = v.string_into(buf);
    return n ? std::string(buf, *n) : std::string("<not a string>");
}

std::string call_tool(const char* name) { return std::string(R"({"name":")") + name + R"(","arguments":{}})"; }

} // namespace

TEST(McpFixtures, ContentToolsWriteTheirOwnContentArrays) {
    Fixture f;
    Reply text(f.request("tools/call", call_tool("test_simple_text")));
    json::Value r = text.result();
    EXPECT_EQ(r.find("isError").as_bool(), false) << text.text;
    EXPECT_FALSE(r.find("structuredContent").valid()) << "no output schema, no structured content";
    ASSERT_EQ(r.find("content").size(), 1u);
    EXPECT_EQ(str(r.find("content").at(0).find("type")), "text");
    EXPECT_EQ(str(r.find("content").at(0).find("text")), "This is a simple text response for testing.");

    Reply image(f.request("tools/call", call_tool("test_image_content")));
    json::Value item = image.result().find("content").at(0);
    EXPECT_EQ(str(item.find("type")), "image");
    EXPECT_EQ(str(item.find("data")), kPng);
    EXPECT_EQ(str(item.find("mimeType")), "image/png");

    Reply audio(f.request("tools/call", call_tool("test_audio_content")));
    item = audio.result().find("content").at(0);
    EXPECT_EQ(str(item.find("type")), "audio");
    EXPECT_EQ(str(item.find("mimeType")), "audio/wav");
    EXPECT_EQ(str(item.find("data")).substr(0, 8), "UklGRiwA") << "base64 of a RIFF header";

    Reply embedded(f.request("tools/call", call_tool("test_embedded_resource")));
    item = embedded.result().find("content").at(0);
    EXPECT_EQ(str(item.find("type")), "resource");
    EXPECT_EQ(str(item.find("resource").find("uri")), "test://embedded-resource");
    EXPECT_EQ(str(item.find("resource").find("mimeType")), "text/plain");
    EXPECT_EQ(str(item.find("resource").find("text")), "This is an embedded resource content.");

    Reply mixed(f.request("tools/call", call_tool("test_multiple_content_types")));
    json::Value content = mixed.result().find("content");
    ASSERT_EQ(content.size(), 3u);
    EXPECT_EQ(str(content.at(0).find("text")), "Multiple content types test:");
    EXPECT_EQ(str(content.at(1).find("type")), "image");
    EXPECT_EQ(str(content.at(2).find("resource").find("uri")), "test://mixed-content-resource");
    EXPECT_EQ(str(content.at(2).find("resource").find("text")), R"({"test":"data","value":123})");

    // tools-call-error: an isError result whose first content item has text; the envelope where
    // every failed call has it (in _meta: a tool without an output schema has no structuredContent).
    Reply error(f.request("tools/call", call_tool("test_error_handling")));
    r = error.result();
    EXPECT_NE(str(r.find("content").at(0).find("text")).find("This tool intentionally returns an error for testing"),
              std::string::npos);
    EXPECT_EQ(str(error.tool_error().find("error").find("code")), "internal_error");
    EXPECT_EQ(str(error.tool_error().find("request_id")), "1");
}

TEST(McpFixtures, EveryFixtureToolIsListedOnOnePageWithABoundedSchema) {
    Fixture f;
    Reply list(f.request("tools/list"));
    json::Value tools = list.result().find("tools");
    EXPECT_FALSE(list.result().find("nextCursor").valid()) << "the suite's client reads one page";
    std::vector<std::string> names;
    for (json::Value t = tools.first(); t.valid(); t = t.next_sibling()) {
        names.push_back(str(t.find("name")));
        EXPECT_FALSE(str(t.find("description")).empty());
        if (names.back() != "kernel_info") {
            EXPECT_FALSE(t.find("outputSchema").valid()) << names.back();
        }
    }
    std::vector<std::string> expected;
    for (const auto& t : fx::tools())
        expected.emplace_back(t.name);
    expected.emplace_back("kernel_info");
    EXPECT_EQ(names, expected);
    // The contract holds for fixtures too: every input schema passes the kernel's bounds lint.
    for (const auto& t : fx::tools()) {
        std::vector<json::Node> nodes(512);
        auto doc = json::Document::parse(t.input_schema, nodes);
        ASSERT_TRUE(doc.ok()) << t.name;
        mcp::schema::Failure failure;
        EXPECT_TRUE(mcp::schema::check_bounded(doc->root(), failure))
            << t.name << ": " << failure.keyword << " at " << failure.path;
    }
}

// json-schema-2020-12 (SEP-1613, SEP-2106): the listing keeps $schema, $defs, $anchor,
// additionalProperties, allOf/anyOf and if/then/else, and each is enforced on call.
TEST(McpFixtures, JsonSchema202012KeywordsArePreservedAndEnforced) {
    Fixture f;
    Reply list(f.request("tools/list"));
    json::Value schema;
    for (json::Value t = list.result().find("tools").first(); t.valid(); t = t.next_sibling())
        if (str(t.find("name")) == "json_schema_2020_12_tool")
            schema = t.find("inputSchema");
    ASSERT_TRUE(schema.valid());
    EXPECT_EQ(str(schema.find("$schema")), "https://json-schema.org/draft/2020-12/schema");
    EXPECT_TRUE(schema.find("$defs").find("address").is_object());
    EXPECT_EQ(schema.find("additionalProperties").as_bool(), false);
    EXPECT_TRUE(schema.find("$defs").find("address").find("$anchor").is_string());
    EXPECT_TRUE(schema.find("allOf").at(0).find("anyOf").is_array());
    EXPECT_TRUE(schema.find("if").is_object() && schema.find("then").is_object() && schema.find("else").is_object());
    auto call = [&](const char* arguments) {
        return Reply(f.request("tools/call",
                               std::string(R"({"name":"json_schema_2020_12_tool","arguments":)") + arguments + "}"));
    };
    Reply ok = call(R"({"name":"a","address":{"city":"Rome"},"email":"a@example.org"})");
    EXPECT_EQ(ok.result().find("isError").as_bool(), false) << ok.text;
    Reply phone = call(R"({"contactMethod":"phone","phone":"123"})");
    EXPECT_EQ(phone.result().find("isError").as_bool(), false) << "then: the phone is there; " << phone.text;
    Reply bad = call(R"({"address":{"zip":"1"},"email":"a@example.org"})");
    EXPECT_EQ(bad.error_code(), "validation_failed");
    EXPECT_EQ(bad.reason(), "additional_property") << bad.text;
    Reply neither = call(R"({"name":"a"})");
    EXPECT_EQ(neither.reason(), "no_alternative") << "allOf/anyOf: a phone or an email; " << neither.text;
    Reply then = call(R"({"contactMethod":"phone","email":"a@example.org"})");
    EXPECT_EQ(then.reason(), "required") << "if contactMethod is phone then phone is required; " << then.text;
    Reply otherwise = call(R"({"contactMethod":"email","phone":"123"})");
    EXPECT_EQ(otherwise.reason(), "required") << "else: email is required; " << otherwise.text;
}

TEST(McpFixtures, AnonymousReachesExactlyTheFixturesInTheProfile) {
    Fixture f;
    ASSERT_EQ(f.session.principal, nullptr);
    Reply fixture(f.request("tools/call", call_tool("test_simple_text")));
    EXPECT_EQ(fixture.result().find("isError").as_bool(), false);
    Reply kernel(f.request("tools/call", call_tool("kernel_info")));
    EXPECT_EQ(kernel.error_code(), "auth_missing_api_key") << "kernel tools keep their scopes";
    Reply prompt(f.request("prompts/get", R"({"name":"test_simple_prompt"})"));
    EXPECT_TRUE(prompt.result().find("messages").is_array());
    Reply read(f.request("resources/read", R"({"uri":"test://static-text"})"));
    EXPECT_TRUE(read.result().find("contents").is_array());
    // A principal holds the fixtures' scope too (anonymous scopes are everyone's).
    mcp::Principal reader;
    reader.id = 1;
    reader.role = mcp::Role::Reader;
    reader.scopes = mcp::scopes_of(mcp::Role::Reader);
    f.session.principal = &reader;
    Reply as_reader(f.request("tools/call", call_tool("test_simple_text")));
    EXPECT_EQ(as_reader.result().find("isError").as_bool(), false);
}

TEST(McpFixtures, TheDefaultProfileServesNoFixturesAndAnonymousNothing) {
    Fixture f(false);
    Reply init(f.request("initialize", R"({"protocolVersion":"2025-11-25"})"));
    json::Value caps = init.result().find("capabilities");
    EXPECT_FALSE(caps.find("prompts").valid());
    EXPECT_FALSE(caps.find("completions").valid());
    EXPECT_FALSE(caps.find("resources").valid());
    Reply list(f.request("tools/list"));
    EXPECT_EQ(list.result().find("tools").size(), 1u);
    Reply fixture(f.request("tools/call", call_tool("test_simple_text")));
    EXPECT_EQ(fixture.error_code(), "validation_unknown_tool");
    Reply kernel(f.request("tools/call", call_tool("kernel_info")));
    EXPECT_EQ(kernel.error_code(), "auth_missing_api_key");
    EXPECT_EQ(Reply(f.request("prompts/list")).root.find("error").find("code").as_int64(), -32601);
    EXPECT_EQ(Reply(f.request("completion/complete",
                              R"({"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":""}})"))
                  .root.find("error")
                  .find("code")
                  .as_int64(),
              -32601);
    // Fixtures configured but their scope held by nobody: still refused to anonymous.
    Fixture scoped;
    scoped.config.anonymous_scopes = 0;
    Reply refused(scoped.request("tools/call", call_tool("test_simple_text")));
    EXPECT_EQ(refused.error_code(), "auth_missing_api_key");
    EXPECT_EQ(Reply(scoped.request("prompts/get", R"({"name":"test_simple_prompt"})")).error_code(),
              "auth_missing_api_key");
    EXPECT_EQ(Reply(scoped.request("resources/read", R"({"uri":"test://static-text"})")).error_code(),
              "auth_missing_api_key");
}

TEST(McpFixtures, CapabilitiesDeclareWhatIsServed) {
    Fixture f;
    Reply init(f.request("initialize", R"({"protocolVersion":"2025-11-25"})"));
    json::Value caps = init.result().find("capabilities");
    EXPECT_TRUE(caps.find("prompts").is_object());
    EXPECT_TRUE(caps.find("completions").is_object());
    EXPECT_EQ(caps.find("resources").find("subscribe").as_bool(), true);
    f.config.subscriptions = false;
    Reply without(f.request("initialize", R"({"protocolVersion":"2025-11-25"})"));
    EXPECT_EQ(without.result().find("capabilities").find("resources").find("subscribe").as_bool(), false);
    EXPECT_EQ(Reply(f.request("resources/subscribe", R"({"uri":"test://watched-resource"})"))
                  .root.find("error")
                  .find("code")
                  .as_int64(),
              -32601)
        << "not served when the host does not deliver the notifications";
}

TEST(McpFixtures, ResourcesWithTextAndBlobContents) {
    Fixture f;
    Reply list(f.request("resources/list"));
    json::Value resources = list.result().find("resources");
    ASSERT_EQ(resources.size(), 3u);
    EXPECT_EQ(str(resources.at(0).find("mimeType")), "text/plain");
    EXPECT_EQ(str(resources.at(1).find("mimeType")), "image/png");

    Reply text(f.request("resources/read", R"({"uri":"test://static-text"})"));
    json::Value entry = text.result().find("contents").at(0);
    EXPECT_EQ(str(entry.find("uri")), "test://static-text");
    EXPECT_EQ(str(entry.find("mimeType")), "text/plain");
    EXPECT_EQ(str(entry.find("text")), "This is the content of the static text resource.");
    EXPECT_EQ(str(entry.find("_meta").find("source_commit")), "abc1234") << "the contract's snapshot fields";
    EXPECT_EQ(str(entry.find("_meta").find("generated_at")), "2026-11-22T08:00:00Z");

    Reply blob(f.request("resources/read", R"({"uri":"test://static-binary"})"));
    entry = blob.result().find("contents").at(0);
    EXPECT_EQ(str(entry.find("blob")), kPng);
    EXPECT_FALSE(entry.find("text").valid());
    ASSERT_FALSE(g_events.empty());
    EXPECT_EQ(g_events.back().kind, mcp::AuditKind::Resource);
    EXPECT_EQ(g_event_names.back(), "test://static-binary");
}

TEST(McpFixtures, ResourceTemplatesSubstituteTheirVariable) {
    Fixture f;
    Reply list(f.request("resources/templates/list"));
    json::Value t = list.result().find("resourceTemplates").at(0);
    EXPECT_EQ(str(t.find("uriTemplate")), "test://template/{id}/data");
    EXPECT_EQ(str(t.find("mimeType")), "application/json");

    Reply read(f.request("resources/read", R"({"uri":"test://template/123/data"})"));
    json::Value entry = read.result().find("contents").at(0);
    EXPECT_EQ(str(entry.find("uri")), "test://template/123/data");
    EXPECT_EQ(str(entry.find("text")), R"({"id":"123","templateTest":true,"data":"Data for ID: 123"})");

    // A variable is 1..64 unreserved characters: no separators, nothing to decode, no traversal.
    for (const char* uri : { "test://template//data", "test://template/a/b/data", "test://template/%2e%2e/data",
                             "test://template/123/data/x", "test://template/123" }) {
        Reply bad(f.request("resources/read", std::string(R"({"uri":")") + uri + R"("})"));
        EXPECT_EQ(bad.root.find("error").find("code").as_int64(), -32002) << uri;
        EXPECT_EQ(bad.error_code(), "validation_unknown_tool") << uri;
    }
    std::string longest(64, 'x');
    EXPECT_TRUE(
        Reply(f.request("resources/read", R"({"uri":"test://template/)" + longest + R"(/data"})")).result().valid());
    EXPECT_EQ(Reply(f.request("resources/read", R"({"uri":"test://template/)" + longest + R"(x/data"})")).error_code(),
              "validation_unknown_tool");
    // A template off the allowlist is neither listed nor read.
    f.resource_allow.pop_back();
    f.config.resource_allowlist = f.resource_allow;
    EXPECT_EQ(Reply(f.request("resources/templates/list")).result().find("resourceTemplates").size(), 0u);
    EXPECT_EQ(Reply(f.request("resources/read", R"({"uri":"test://template/123/data"})")).error_code(),
              "validation_unknown_tool");
}

TEST(McpFixtures, SubscribersHearWhenTheWatchedResourceChanges) {
    Fixture f;
    std::vector<char> out(4096);
    Reply sub(f.request("resources/subscribe", R"({"uri":"test://watched-resource"})"));
    EXPECT_TRUE(sub.result().is_object()) << sub.text;
    EXPECT_EQ(sub.result().size(), 0u);
    EXPECT_EQ(f.server->next_resource_update(f.session, out), 0u) << "nothing changed yet";
    g_now += fx::kWatchedPeriodNs;
    size_t n = f.server->next_resource_update(f.session, out);
    ASSERT_GT(n, 0u);
    Reply note(std::string(out.data(), n));
    EXPECT_EQ(str(note.root.find("method")), "notifications/resources/updated");
    EXPECT_EQ(str(note.root.find("params").find("uri")), "test://watched-resource");
    EXPECT_FALSE(note.root.find("id").valid());
    EXPECT_EQ(f.server->next_resource_update(f.session, out), 0u) << "once per change";
    // The content moved with it.
    Reply read(f.request("resources/read", R"({"uri":"test://watched-resource"})"));
    EXPECT_NE(str(read.result().find("contents").at(0).find("text")).find("revision"), std::string::npos);

    // Subscribing twice holds one subscription; a static resource never notifies.
    f.request("resources/subscribe", R"({"uri":"test://watched-resource"})");
    f.request("resources/subscribe", R"({"uri":"test://static-text"})");
    EXPECT_EQ(f.session.subscription_count, 2u);
    Reply unsub(f.request("resources/unsubscribe", R"({"uri":"test://watched-resource"})"));
    EXPECT_EQ(unsub.result().size(), 0u);
    g_now += fx::kWatchedPeriodNs;
    EXPECT_EQ(f.server->next_resource_update(f.session, out), 0u) << "unsubscribed";
    EXPECT_EQ(f.session.subscription_count, 1u);

    Reply unknown(f.request("resources/subscribe", R"({"uri":"test://nothing"})"));
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32002);
    EXPECT_EQ(unknown.error_code(), "validation_unknown_tool");
    EXPECT_EQ(g_events.back().outcome, mcp::AuditOutcome::Deny);
    // Stateless 2026-07-28 has no subscriptions.
    Reply modern(f.request(
        "resources/subscribe",
        R"({"uri":"test://watched-resource","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}})"));
    EXPECT_EQ(modern.root.find("error").find("code").as_int64(), -32601);
}

TEST(McpFixtures, SubscriptionsPerSessionAreBounded) {
    static const mcp::Resource kMany[] = {
        { "r://0", "0", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://1", "1", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://2", "2", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://3", "3", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://4", "4", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://5", "5", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://6", "6", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://7", "7", "", "", 0, "1", nullptr, "text/plain", nullptr },
        { "r://8", "8", "", "", 0, "1", nullptr, "text/plain", nullptr },
    };
    Fixture f;
    std::vector<std::string_view> allow;
    for (const auto& r : kMany)
        allow.emplace_back(r.uri);
    f.config.resources = kMany;
    f.config.resource_allowlist = allow;
    for (int i = 0; i < 8; ++i)
        EXPECT_TRUE(
            Reply(f.request("resources/subscribe", R"({"uri":"r://)" + std::to_string(i) + R"("})")).result().valid());
    Reply ninth(f.request("resources/subscribe", R"({"uri":"r://8"})"));
    EXPECT_EQ(ninth.root.find("error").find("code").as_int64(), -32602);
    EXPECT_EQ(ninth.reason(), "too_many_subscriptions");
    EXPECT_EQ(f.session.subscription_count, mcp::Session::kMaxSubscriptions);
}

TEST(McpFixtures, PromptsAreListedInPagesAndGotWithTheirArguments) {
    Fixture f;
    f.config.page_size = 3;
    Reply first(f.request("prompts/list"));
    json::Value prompts = first.result().find("prompts");
    ASSERT_EQ(prompts.size(), 3u);
    EXPECT_EQ(str(prompts.at(0).find("name")), "test_simple_prompt");
    EXPECT_EQ(str(prompts.at(1).find("arguments").at(0).find("name")), "arg1");
    EXPECT_EQ(prompts.at(1).find("arguments").at(0).find("required").as_bool(), true);
    std::string cursor = str(first.result().find("nextCursor"));
    Reply second(f.request("prompts/list", R"({"cursor":")" + cursor + R"("})"));
    EXPECT_EQ(str(second.result().find("prompts").at(0).find("name")), "test_prompt_with_image");
    EXPECT_FALSE(second.result().find("nextCursor").valid());
    EXPECT_EQ(Reply(f.request("prompts/list", R"({"cursor":"x"})")).reason(), "invalid_cursor");

    Reply simple(f.request("prompts/get", R"({"name":"test_simple_prompt"})"));
    json::Value m = simple.result().find("messages").at(0);
    EXPECT_EQ(str(m.find("role")), "user");
    EXPECT_EQ(str(m.find("content").find("text")), "This is a simple prompt for testing.");

    Reply args(f.request("prompts/get",
                         R"({"name":"test_prompt_with_arguments","arguments":{"arg1":"hello","arg2":"w\"orld"}})"));
    EXPECT_EQ(str(args.result().find("messages").at(0).find("content").find("text")),
              "Prompt with arguments: arg1='hello', arg2='w\"orld'");
    EXPECT_EQ(g_events.back().kind, mcp::AuditKind::Prompt);
    EXPECT_NE(g_events.back().args_hash, 0u);
    EXPECT_EQ(g_event_names.back(), "test_prompt_with_arguments");

    Reply embedded(f.request(
        "prompts/get",
        R"({"name":"test_prompt_with_embedded_resource","arguments":{"resourceUri":"test://example-resource"}})"));
    json::Value messages = embedded.result().find("messages");
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(str(messages.at(0).find("content").find("type")), "resource");
    EXPECT_EQ(str(messages.at(0).find("content").find("resource").find("uri")), "test://example-resource");
    EXPECT_EQ(str(messages.at(1).find("content").find("text")), "Please process the embedded resource above.");

    Reply image(f.request("prompts/get", R"({"name":"test_prompt_with_image"})"));
    json::Value content = image.result().find("messages").at(0).find("content");
    EXPECT_EQ(str(content.find("type")), "image");
    EXPECT_EQ(str(content.find("data")), kPng);
    EXPECT_EQ(str(content.find("mimeType")), "image/png");
}

TEST(McpFixtures, PromptArgumentsAreValidatedAndUnknownPromptsRefused) {
    Fixture f;
    struct Case {
        const char* params;
        const char* reason;
    } cases[] = {
        { R"({"name":"test_prompt_with_arguments","arguments":{"arg1":"a"}})", "missing_argument" },
        { R"({"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b","arg3":"c"}})",
          "unknown_argument" },
        { R"({"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":7}})", "argument_not_string" },
        { R"({"name":"test_prompt_with_arguments","arguments":"x"})", "invalid_call" },
        { R"({"arguments":{}})", "invalid_call" },
    };
    for (const auto& c : cases) {
        Reply r(f.request("prompts/get", c.params));
        EXPECT_EQ(r.root.find("error").find("code").as_int64(), -32602) << c.params;
        EXPECT_EQ(r.error_code(), "validation_failed") << c.params;
        EXPECT_EQ(r.reason(), c.reason) << c.params;
    }
    std::string longest(mcp::Server::kMaxPromptArgument, 'a'), too_long(mcp::Server::kMaxPromptArgument + 1, 'a');
    EXPECT_TRUE(Reply(f.request("prompts/get", R"({"name":"test_prompt_with_arguments","arguments":{"arg1":")" +
                                                   longest + R"(","arg2":"b"}})"))
                    .result()
                    .valid());
    EXPECT_EQ(Reply(f.request("prompts/get", R"({"name":"test_prompt_with_arguments","arguments":{"arg1":")" +
                                                 too_long + R"(","arg2":"b"}})"))
                  .reason(),
              "argument_too_long");

    // Unknown (or unlisted) prompt: -32602 with the envelope's validation_unknown_tool (envelope.h).
    Reply unknown(f.request("prompts/get", R"({"name":"no_such_prompt"})", 42));
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32602);
    EXPECT_EQ(unknown.error_code(), "validation_unknown_tool");
    EXPECT_EQ(str(unknown.root.find("error").find("data").find("request_id")), "42");
    EXPECT_EQ(str(unknown.root.find("error").find("data").find("timestamp")), "2026-11-22T08:00:00Z");
    EXPECT_EQ(g_events.back().kind, mcp::AuditKind::Prompt);
    EXPECT_EQ(g_events.back().outcome, mcp::AuditOutcome::Deny);
    f.prompt_allow.erase(f.prompt_allow.begin());
    f.config.prompt_allowlist = f.prompt_allow;
    EXPECT_EQ(Reply(f.request("prompts/get", R"({"name":"test_simple_prompt"})")).error_code(),
              "validation_unknown_tool");
    Reply list(f.request("prompts/list"));
    EXPECT_EQ(list.result().find("prompts").size(), mcp::fixtures::prompts().size() - 1)
        << "an unlisted prompt is not listed either";
}

TEST(McpFixtures, CompletionOffersPrefixMatches) {
    Fixture f;
    auto complete = [&](const std::string& ref, const std::string& name, const std::string& value) {
        return Reply(f.request("completion/complete", R"({"ref":)" + ref + R"(,"argument":{"name":")" + name +
                                                          R"(","value":")" + value + R"("}})"));
    };
    const std::string prompt = R"({"type":"ref/prompt","name":"test_prompt_with_arguments"})";
    Reply par(complete(prompt, "arg1", "par"));
    json::Value c = par.result().find("completion");
    ASSERT_EQ(c.find("values").size(), 3u) << par.text;
    EXPECT_EQ(str(c.find("values").at(0)), "paris");
    EXPECT_EQ(str(c.find("values").at(2)), "party");
    EXPECT_EQ(c.find("total").as_int64(), 3);
    EXPECT_EQ(c.find("hasMore").as_bool(), false);
    EXPECT_EQ(complete(prompt, "arg1", "pari").result().find("completion").find("values").size(), 1u);
    EXPECT_EQ(complete(prompt, "arg1", "test").result().find("completion").find("values").size(), 0u)
        << "the suite's own request: an empty array is an answer";
    Reply id(complete(R"({"type":"ref/resource","uri":"test://template/{id}/data"})", "id", "4"));
    EXPECT_EQ(str(id.result().find("completion").find("values").at(0)), "456");

    Reply bad_type(complete(R"({"type":"ref/tool","name":"x"})", "arg1", ""));
    EXPECT_EQ(bad_type.root.find("error").find("code").as_int64(), -32602);
    EXPECT_EQ(bad_type.reason(), "invalid_ref");
    EXPECT_EQ(complete(R"({"type":"ref/prompt"})", "arg1", "").reason(), "invalid_ref");
    EXPECT_EQ(complete(prompt, "arg1", std::string(mcp::Server::kMaxPromptArgument + 1, 'p')).reason(), "invalid_ref");
    Reply unknown(complete(R"({"type":"ref/prompt","name":"nope"})", "arg1", ""));
    EXPECT_EQ(unknown.root.find("error").find("code").as_int64(), -32602);
    EXPECT_EQ(unknown.error_code(), "validation_unknown_tool");
    EXPECT_EQ(complete(R"({"type":"ref/resource","uri":"test://template/123/data"})", "id", "").error_code(),
              "validation_unknown_tool")
        << "a template is named by its uriTemplate";
    EXPECT_EQ(complete(prompt, "arg9", "").reason(), "unknown_argument");
    // Scopes as for getting the prompt.
    f.config.anonymous_scopes = 0;
    EXPECT_EQ(complete(prompt, "arg1", "").error_code(), "auth_missing_api_key");
}

namespace {
std::vector<mcp::PendingCall> g_pending;
bool start_async(const mcp::Tool&, const json::Value&, const mcp::PendingCall& call, mcp::ToolError&) {
    g_pending.push_back(call);
    return true;
}
} // namespace

// A running call's own log notifications (tools-call-with-logging) and its content result.
TEST(McpFixtures, CallsLogAtTheLevelAskedForAndAnswerWithContent) {
    Fixture f;
    f.hooks.start_call = start_async;
    g_pending.clear();
    std::vector<char> out(8192);
    EXPECT_EQ(f.request("tools/call", call_tool("test_tool_with_logging"), 1), "");
    ASSERT_EQ(g_pending.size(), 1u);
    EXPECT_EQ(g_pending[0].notify_level, -1) << "the client asked for no logging";
    EXPECT_EQ(f.server->call_log(g_pending[0], mcp::LogLevel::Emergency, "x", out), 0u);

    f.request("logging/setLevel", R"({"level":"info"})");
    f.request("tools/call", call_tool("test_tool_with_logging"), 2);
    ASSERT_EQ(g_pending.size(), 2u);
    const mcp::PendingCall& call = g_pending[1];
    EXPECT_EQ(call.result, mcp::ToolResult::Content);
    EXPECT_EQ(f.server->call_log(call, mcp::LogLevel::Debug, "chatter", out), 0u);
    size_t n = f.server->call_log(call, mcp::LogLevel::Info, "Tool execution started", out);
    ASSERT_GT(n, 0u);
    Reply note(std::string(out.data(), n));
    EXPECT_EQ(str(note.root.find("method")), "notifications/message");
    EXPECT_EQ(str(note.root.find("params").find("level")), "info");
    EXPECT_EQ(str(note.root.find("params").find("logger")), "test_tool_with_logging");
    EXPECT_EQ(str(note.root.find("params").find("data")), "Tool execution started");

    n = f.server->finish_call(call, true, R"([{"type":"text","text":"done"}])", {}, false, out);
    Reply done(std::string(out.data(), n));
    EXPECT_EQ(str(done.result().find("content").at(0).find("text")), "done");
    EXPECT_FALSE(done.result().find("structuredContent").valid());
    // A content tool whose output is not an array is refused, like malformed output.
    f.request("tools/call", call_tool("test_tool_with_logging"), 3);
    n = f.server->finish_call(g_pending.back(), true, R"({"a":1})", {}, false, out);
    EXPECT_EQ(str(Reply(std::string(out.data(), n)).tool_error().find("error").find("code")), "internal_error");

    // 2026-07-28: the request's own logLevel.
    f.request(
        "tools/call",
        R"({"name":"test_tool_with_logging","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"}})",
        4);
    EXPECT_EQ(g_pending.back().notify_level, static_cast<int8_t>(mcp::LogLevel::Warning));
}

// Requests the server sends the client while a tool runs (sampling, elicitation): the dispatcher
// hands a client's response to the host with its id, kind and session; a ClientExchange takes
// only the response to its own request from its own session; what a call may ask follows the
// capabilities the client declared (per session, or per 2026-07-28 request); the conformance
// fixtures' requests and the content they make of the answers.
#include <json/json.h>
#include <json/writer.h>
#include <mcp/fixtures/conformance.h>
#include <mcp/policy/roles.h>
#include <mcp/server/client_request.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include "support/mcp_reply.h"

#include <memory>
#include <string>
#include <vector>

namespace {

namespace fx = mcp::fixtures;

struct Response {
    std::string id;
    bool id_is_string;
    std::string body;
    bool is_error;
    uint32_t origin;
};
std::vector<Response> g_responses;
void record_response(std::string_view id, bool is_string, std::string_view body, bool is_error, uint32_t origin) {
    g_responses.push_back({ std::string(id), is_string, std::string(body), is_error, origin });
}

std::vector<mcp::PendingCall> g_calls;
bool start_call(const mcp::Tool&, const json::Value&, const mcp::PendingCall& call, mcp::ToolError&) {
    g_calls.push_back(call);
    return true;
}

// The dispatcher as the kernel runs it in the conformance profile, with asynchronous calls.
struct Fixture {
    Fixture() {
        for (const auto& t : fx::tools())
            allow.emplace_back(t.name);
        config.tools = fx::tools();
        config.allowlist = allow;
        config.anonymous_scopes = mcp::kConformanceFixtures;
        hooks.now_rfc3339_fn = fixed_time;
        hooks.now_ns_fn = now_ns;
        hooks.start_call = start_call;
        hooks.client_response = record_response;
        hooks.audit_fn = record_event;
        session.origin = 7;
        g_responses.clear();
        g_calls.clear();
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
    }
    std::string call(const std::string& msg) {
        std::vector<char> out(1 << 16);
        return std::string(out.data(), server->handle(msg, session, out));
    }
    void initialize(const std::string& capabilities) {
        Reply r(call(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                     R"("clientInfo":{"name":"t","version":"1"},"capabilities":)" +
                     capabilities + "}}"));
        ASSERT_TRUE(r.result().valid()) << r.text;
    }
    // tools/call of test_sampling; the PendingCall the host was handed.
    mcp::PendingCall sampling_call(const std::string& meta = "") {
        size_t before = g_calls.size();
        std::string reply = call(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_sampling",)"
                                 R"("arguments":{"prompt":"hi"})" +
                                 (meta.empty() ? "" : R"(,"_meta":)" + meta) + "}}");
        EXPECT_EQ(reply, "") << "deferred to the host";
        EXPECT_EQ(g_calls.size(), before + 1);
        return g_calls.empty() ? mcp::PendingCall {} : g_calls.back();
    }
    std::vector<std::string_view> allow;
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter { mcp::LimitConfig { 100, 100, 64 } }; // calls are never finished here
    mcp::Session session;
    std::unique_ptr<mcp::Server> server;
};

std::string str(const json::Value& v) {
    char buf[4096];
    auto n = v.string_into(buf);
    return n ? std::string(buf, *n) : std::string("<not a string>");
}

// An exchange with a request queued and sent as "srv-1" to session 7.
std::unique_ptr<mcp::ClientExchange> sent_exchange() {
    auto ex = std::make_unique<mcp::ClientExchange>();
    json::Writer w(ex->params_buffer());
    w.begin_object().key("maxTokens").number(100).end_object();
    EXPECT_TRUE(ex->queue("sampling/createMessage", w.size()));
    EXPECT_EQ(ex->state(), mcp::ClientExchange::State::Queued);
    EXPECT_EQ(ex->method(), "sampling/createMessage");
    EXPECT_EQ(ex->params(), R"({"maxTokens":100})");
    ex->sent("srv-1", 7);
    EXPECT_EQ(ex->state(), mcp::ClientExchange::State::Sent);
    return ex;
}

} // namespace

TEST(McpClientRequest, ResponsesGoToTheHostWithTheirIdKindAndSession) {
    Fixture f;
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","model":"m"}})"), "")
        << "a response is never answered";
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","id":12,"error":{"code":-1,"message":"User rejected"}})"), "");
    ASSERT_EQ(g_responses.size(), 2u);
    EXPECT_EQ(g_responses[0].id, "srv-1");
    EXPECT_TRUE(g_responses[0].id_is_string);
    EXPECT_EQ(g_responses[0].body, R"({"role":"assistant","model":"m"})");
    EXPECT_FALSE(g_responses[0].is_error);
    EXPECT_EQ(g_responses[0].origin, 7u) << "the session it came from";
    EXPECT_EQ(g_responses[1].id, "12");
    EXPECT_FALSE(g_responses[1].id_is_string);
    EXPECT_EQ(g_responses[1].body, R"({"code":-1,"message":"User rejected"})");
    EXPECT_TRUE(g_responses[1].is_error);

    // A result or error that is not an object reaches the host as JSON text that re-parses, a
    // string with its quotes (found by dispatcher_fuzz: it was the string's body alone).
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","id":13,"result":"completion/complete"})"), "");
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","id":14,"error":"no"})"), "");
    ASSERT_EQ(g_responses.size(), 4u);
    EXPECT_EQ(g_responses[2].body, R"("completion/complete")");
    EXPECT_EQ(g_responses[3].body, R"("no")");
    EXPECT_TRUE(g_responses[3].is_error);
    g_responses.resize(2);

    // Not responses of a kind we issue: dropped without a word.
    for (const char* odd :
         { R"({"jsonrpc":"2.0","id":"a","result":{},"error":{"code":1,"message":"x"}})",
           R"({"jsonrpc":"2.0","id":"a"})", R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})",
           R"({"jsonrpc":"2.0","id":{"x":1},"result":{}})", R"({"jsonrpc":"2.0","id":1.5,"result":{}})" })
        EXPECT_EQ(f.call(odd), "") << odd;
    EXPECT_EQ(g_responses.size(), 2u);
    // Not JSON-RPC 2.0 at all: still refused as before.
    EXPECT_EQ(Reply(f.call(R"({"id":"srv-1","result":{}})")).error_code(), "validation_failed");

    // Without a host hook responses are simply dropped.
    f.hooks.client_response = nullptr;
    EXPECT_EQ(f.call(R"({"jsonrpc":"2.0","id":"srv-2","result":{}})"), "");
    EXPECT_EQ(g_responses.size(), 2u);
}

TEST(McpClientRequest, AnExchangeTakesOnlyItsOwnResponseFromItsOwnSession) {
    auto ex = sent_exchange();
    EXPECT_EQ(ex->id(), "srv-1");
    EXPECT_FALSE(ex->accept("srv-1", true, 8, "{}", false)) << "another session's id never matches";
    EXPECT_FALSE(ex->accept("srv-2", true, 7, "{}", false)) << "another request";
    EXPECT_FALSE(ex->accept("1", false, 7, "{}", false)) << "a number is never one of our ids";
    EXPECT_FALSE(ex->queue("elicitation/create", 2)) << "one request outstanding at a time";
    EXPECT_EQ(ex->state(), mcp::ClientExchange::State::Sent);

    EXPECT_TRUE(ex->accept("srv-1", true, 7, R"({"action":"accept"})", false));
    EXPECT_EQ(ex->state(), mcp::ClientExchange::State::Answered);
    EXPECT_EQ(ex->outcome(), mcp::ClientExchange::Outcome::Result);
    EXPECT_EQ(ex->response(), R"({"action":"accept"})");
    EXPECT_FALSE(ex->accept("srv-1", true, 7, R"({"again":1})", false)) << "a second answer is dropped";
    EXPECT_EQ(ex->response(), R"({"action":"accept"})");
    EXPECT_FALSE(ex->withdraw()) << "answered: nothing to withdraw";

    // The next request reuses the exchange; an error answer is an answer.
    json::Writer w(ex->params_buffer());
    w.begin_object().end_object();
    ASSERT_TRUE(ex->queue("elicitation/create", w.size()));
    ex->sent("srv-2", 7);
    EXPECT_FALSE(ex->accept("srv-1", true, 7, "{}", false)) << "the old id is gone";
    EXPECT_TRUE(ex->accept("srv-2", true, 7, R"({"code":-1,"message":"no"})", true));
    EXPECT_EQ(ex->outcome(), mcp::ClientExchange::Outcome::Error);
}

TEST(McpClientRequest, WithdrawnOversizedAndUnsentRequests) {
    auto ex = sent_exchange();
    EXPECT_TRUE(ex->withdraw()) << "the tool stops waiting (cancelled, or past its deadline)";
    EXPECT_EQ(ex->state(), mcp::ClientExchange::State::Withdrawn);
    EXPECT_FALSE(ex->accept("srv-1", true, 7, "{}", false)) << "a late answer is dropped";

    ex = sent_exchange();
    std::string big = "{\"text\":\"" + std::string(mcp::ClientExchange::kMaxResponse, 'x') + "\"}";
    EXPECT_TRUE(ex->accept("srv-1", true, 7, big, false)) << "ours, but refused whole";
    EXPECT_EQ(ex->outcome(), mcp::ClientExchange::Outcome::TooLarge);
    EXPECT_EQ(ex->response(), "");

    // Bounds on the request itself.
    mcp::ClientExchange fresh;
    EXPECT_FALSE(fresh.queue(std::string(mcp::ClientExchange::kMaxMethod, 'm'), 2));
    EXPECT_FALSE(fresh.queue("sampling/createMessage", mcp::ClientExchange::kMaxParams + 1));
    EXPECT_FALSE(fresh.queue("", 2));
    EXPECT_EQ(fresh.state(), mcp::ClientExchange::State::Idle);
    ASSERT_TRUE(fresh.queue("sampling/createMessage", 2));
    fresh.unsent(); // the bridge could not write it
    EXPECT_EQ(fresh.state(), mcp::ClientExchange::State::Answered);
    EXPECT_EQ(fresh.outcome(), mcp::ClientExchange::Outcome::Unsent);
    fresh.sent("srv-9", 7);
    EXPECT_EQ(fresh.state(), mcp::ClientExchange::State::Answered) << "only a queued request is sent";
}

TEST(McpClientRequest, CallsMayAskOnlyWhatTheClientDeclared) {
    EXPECT_EQ(mcp::capability_for("sampling/createMessage"), mcp::kClientSampling);
    EXPECT_EQ(mcp::capability_for("elicitation/create"), mcp::kClientElicitation);
    EXPECT_EQ(mcp::capability_for("roots/list"), mcp::kClientRoots);
    EXPECT_EQ(mcp::capability_for("tools/call"), 0) << "not something a server asks a client";

    Fixture f;
    EXPECT_EQ(f.sampling_call().client_caps, 0) << "no initialize: nothing declared";
    f.initialize(R"({"sampling":{}})");
    EXPECT_EQ(f.sampling_call().client_caps, mcp::kClientSampling);
    f.initialize(R"({"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true}})");
    EXPECT_EQ(f.sampling_call().client_caps, mcp::kClientSampling | mcp::kClientElicitation | mcp::kClientRoots);
    f.initialize(R"({"sampling":true,"elicitation":null})");
    EXPECT_EQ(f.sampling_call().client_caps, 0) << "a capability is an object";
    f.initialize("{}");
    EXPECT_EQ(f.sampling_call().client_caps, 0) << "a new initialize replaces the declaration";

    // 2026-07-28: the request's own clientCapabilities, whatever the session said.
    f.initialize(R"({"sampling":{}})");
    const std::string modern =
        R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":)";
    EXPECT_EQ(f.sampling_call(modern + R"({"elicitation":{}}})").client_caps, mcp::kClientElicitation);
    EXPECT_EQ(f.sampling_call(modern + "{}}").client_caps, 0);

    // A transport that cannot bring responses back (HTTP without a session) lets no 2025 call
    // ask; a 2026-07-28 call asks in its result (an input round), which needs no way back.
    f.session.client_replies = false;
    EXPECT_EQ(f.sampling_call().client_caps, 0);
    EXPECT_EQ(f.sampling_call(modern + R"({"sampling":{}}})").client_caps, mcp::kClientSampling);
}

TEST(McpClientRequest, TheRequestIsOneJsonRpcMessage) {
    std::vector<char> out(4096);
    size_t n = mcp::Server::client_request("srv-3", "elicitation/create", R"({"message":"hi"})", out);
    EXPECT_EQ(std::string(out.data(), n),
              R"({"jsonrpc":"2.0","id":"srv-3","method":"elicitation/create","params":{"message":"hi"}})");
    EXPECT_EQ(mcp::Server::client_request("srv-3", "x", "[1]", out), 0u) << "params are an object";
    EXPECT_EQ(mcp::Server::client_request("srv-3", "x", "", out), 0u);
    std::vector<char> small(32);
    EXPECT_EQ(mcp::Server::client_request("srv-3", "elicitation/create", R"({"message":"hi"})", small), 0u)
        << "does not fit: nothing half-written";
}

namespace {

// A fixture's request params, written from the call's arguments and parsed back.
struct Written {
    std::string text;
    std::vector<json::Node> nodes = std::vector<json::Node>(512);
    json::Document doc;
    json::Value root;
};

void write_params(const fx::ClientAsk& ask, const std::string& args_text, Written& out) {
    std::vector<json::Node> arg_nodes(64);
    auto args = json::Document::parse(args_text, arg_nodes);
    ASSERT_TRUE(args.ok());
    std::vector<char> buf(mcp::ClientExchange::kMaxParams);
    json::Writer w(buf);
    ask.params(args->root(), w);
    ASSERT_TRUE(w.complete());
    out.text = std::string(w.view());
    auto d = json::Document::parse(out.text, out.nodes);
    ASSERT_TRUE(d.ok()) << out.text;
    out.doc = *d;
    out.root = out.doc.root();
}

// The content a fixture makes of a client's result ("" and err on refusal).
std::string answer_text(const fx::ClientAsk& ask, const std::string& result, mcp::ToolError& err) {
    std::vector<json::Node> nodes(256);
    auto doc = json::Document::parse(result, nodes);
    EXPECT_TRUE(doc.ok()) << result;
    std::vector<char> buf(8192);
    json::Writer w(buf);
    if (!ask.answer(doc->root(), w, err))
        return "";
    std::string content(w.view());
    std::vector<json::Node> cn(16);
    auto c = json::Document::parse(content, cn);
    EXPECT_TRUE(c.ok());
    EXPECT_EQ(c->root().size(), 1u);
    return str(c->root().at(0).find("text"));
}

} // namespace

TEST(McpClientRequest, SamplingFixtureAsksWithThePromptAndReturnsTheAnswer) {
    const fx::ClientAsk* ask = fx::client_ask("test_sampling");
    ASSERT_NE(ask, nullptr);
    EXPECT_STREQ(ask->method, "sampling/createMessage");
    Written p;
    write_params(*ask, R"({"prompt":"Test \"prompt\" for sampling"})", p);
    json::Value message = p.root.find("messages").at(0);
    EXPECT_EQ(str(message.find("role")), "user");
    EXPECT_EQ(str(message.find("content").find("type")), "text");
    EXPECT_EQ(str(message.find("content").find("text")), "Test \"prompt\" for sampling");
    EXPECT_EQ(p.root.find("maxTokens").as_int64(), 100);

    mcp::ToolError err;
    EXPECT_EQ(
        answer_text(
            *ask,
            R"({"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model","stopReason":"endTurn"})",
            err),
        "LLM response: This is a test response from the client");
    EXPECT_EQ(
        answer_text(
            *ask,
            R"({"role":"assistant","content":[{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"two"}],"model":"m"})",
            err),
        "LLM response: two")
        << "2025-11-25: content may be an array";
    EXPECT_EQ(answer_text(*ask, R"({"role":"assistant","content":{"type":"image","data":""},"model":"m"})", err), "");
    EXPECT_STREQ(err.reason, "malformed_answer");
    std::string longer = R"({"role":"assistant","content":{"type":"text","text":")" +
                         std::string(fx::kMaxAnswerText, 'x') + R"("}})";
    EXPECT_EQ(answer_text(*ask, longer, err), "");
    EXPECT_EQ(err.code, mcp::ErrorCode::LimitOutputExceeded) << "refused, never cut";
}

TEST(McpClientRequest, ElicitationFixturesAskForTheSuitesFormsAndReportTheAnswer) {
    const fx::ClientAsk* ask = fx::client_ask("test_elicitation");
    ASSERT_NE(ask, nullptr);
    EXPECT_STREQ(ask->method, "elicitation/create");
    Written p;
    write_params(*ask, R"({"message":"Please provide your information"})", p);
    EXPECT_EQ(str(p.root.find("message")), "Please provide your information");
    json::Value schema = p.root.find("requestedSchema");
    EXPECT_EQ(str(schema.find("properties").find("username").find("type")), "string");
    EXPECT_EQ(str(schema.find("properties").find("email").find("type")), "string");
    EXPECT_EQ(schema.find("required").size(), 2u);
    mcp::ToolError err;
    EXPECT_EQ(answer_text(*ask, R"({"action":"accept","content":{"username":"testuser","email":"test@example.com"}})",
                          err),
              R"(User response: action=accept, content={"username":"testuser","email":"test@example.com"})");
    EXPECT_EQ(answer_text(*ask, R"({"action":"decline"})", err), "User response: action=decline, content={}");
    EXPECT_EQ(answer_text(*ask, R"({"action":"maybe"})", err), "");
    EXPECT_STREQ(err.reason, "malformed_answer");
    EXPECT_EQ(answer_text(*ask, R"({"action":"accept","content":[1]})", err), "");

    // SEP-1034: a default for every primitive type.
    ask = fx::client_ask("test_elicitation_sep1034_defaults");
    ASSERT_NE(ask, nullptr);
    write_params(*ask, "{}", p);
    json::Value props = p.root.find("requestedSchema").find("properties");
    EXPECT_EQ(str(props.find("name").find("default")), "John Doe");
    EXPECT_EQ(str(props.find("age").find("type")), "integer");
    EXPECT_EQ(props.find("age").find("default").as_int64(), 30);
    EXPECT_EQ(props.find("score").find("default").as_double(), 95.5);
    EXPECT_EQ(str(props.find("status").find("default")), "active");
    EXPECT_EQ(props.find("status").find("enum").size(), 3u);
    EXPECT_EQ(props.find("verified").find("default").as_bool(), true);
    EXPECT_EQ(answer_text(*ask, R"({"action":"accept","content":{"name":"Jane Smith","age":25}})", err),
              R"(Elicitation completed: action=accept, content={"name":"Jane Smith","age":25})");

    // SEP-1330: the five enum variants.
    ask = fx::client_ask("test_elicitation_sep1330_enums");
    ASSERT_NE(ask, nullptr);
    write_params(*ask, "{}", p);
    props = p.root.find("requestedSchema").find("properties");
    EXPECT_EQ(props.find("untitledSingle").find("enum").size(), 3u);
    EXPECT_FALSE(props.find("untitledSingle").find("oneOf").valid());
    EXPECT_EQ(str(props.find("titledSingle").find("oneOf").at(0).find("title")), "First Option");
    EXPECT_FALSE(props.find("titledSingle").find("enum").valid());
    EXPECT_EQ(props.find("legacyEnum").find("enumNames").size(), props.find("legacyEnum").find("enum").size());
    EXPECT_EQ(str(props.find("untitledMulti").find("type")), "array");
    EXPECT_EQ(props.find("untitledMulti").find("items").find("enum").size(), 3u);
    EXPECT_EQ(str(props.find("titledMulti").find("items").find("anyOf").at(2).find("const")), "value3");

    // Every asking fixture is a tool of the profile whose body the kernel supplies.
    for (const auto& a : fx::client_asks()) {
        bool listed = false;
        for (const auto& t : fx::tools())
            if (std::string_view(t.name) == a.tool) {
                listed = true;
                EXPECT_EQ(t.run, nullptr) << a.tool;
                EXPECT_EQ(t.result, mcp::ToolResult::Content) << a.tool;
            }
        EXPECT_TRUE(listed) << a.tool;
    }
}

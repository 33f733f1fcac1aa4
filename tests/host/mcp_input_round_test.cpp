// 2026-07-28 input rounds (SEP-2322): the sealed requestState, the InputRound a body asks
// through, and the dispatcher's side: the InputRequiredResult it writes for a call that asked,
// the answers it hands the next round (fresh ones and those the state carried), and what it
// refuses (malformed inputResponses, a forged, foreign or expired state). A prompt that asks
// runs its rounds inside the dispatcher.
#include <json/json.h>
#include <json/writer.h>
#include <mcp/fixtures/conformance.h>
#include <mcp/policy/roles.h>
#include <mcp/server/client_request.h>
#include <mcp/server/input_round.h>
#include <mcp/server/request_state.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include "support/mcp_reply.h"

#include <memory>
#include <string>
#include <vector>

namespace {

namespace fx = mcp::fixtures;

const uint8_t kKey[32] = { 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                           17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
constexpr uint64_t kSecond = 1'000'000'000;

TEST(RequestState, OpensOnlyForWhatSealedIt) {
    const mcp::StateBinding b { "tools/call", "confirm_tool", 0x1234, 7 };
    char state[mcp::kMaxState];
    size_t n = mcp::seal_state(kKey, b, 100 * kSecond, R"("a":{"action":"accept"})", state);
    ASSERT_GT(n, 0u);
    std::string sealed(state, n);
    char payload[mcp::kMaxStatePayload];
    std::string_view answers;
    EXPECT_EQ(mcp::open_state(kKey, b, 101 * kSecond, sealed, payload, answers), mcp::StateCheck::Ok);
    EXPECT_EQ(answers, R"("a":{"action":"accept"})");

    std::string tampered = sealed;
    tampered[3] = tampered[3] == 'A' ? 'B' : 'A';
    EXPECT_EQ(mcp::open_state(kKey, b, 101 * kSecond, tampered, payload, answers), mcp::StateCheck::Forged);
    EXPECT_EQ(mcp::open_state(kKey, b, 101 * kSecond, sealed + "-TAMPERED", payload, answers),
              mcp::StateCheck::Malformed);
    uint8_t other_key[32] = {};
    EXPECT_EQ(mcp::open_state(other_key, b, 101 * kSecond, sealed, payload, answers), mcp::StateCheck::Forged);
    for (mcp::StateBinding other : { mcp::StateBinding { "prompts/get", "confirm_tool", 0x1234, 7 },
                                     mcp::StateBinding { "tools/call", "other_tool", 0x1234, 7 },
                                     mcp::StateBinding { "tools/call", "confirm_tool", 0x1235, 7 },
                                     mcp::StateBinding { "tools/call", "confirm_tool", 0x1234, 8 } })
        EXPECT_EQ(mcp::open_state(kKey, other, 101 * kSecond, sealed, payload, answers), mcp::StateCheck::Foreign)
            << other.method << " " << other.name << " " << other.principal;
    EXPECT_EQ(mcp::open_state(kKey, b, 100 * kSecond + mcp::kStateLifetimeNs, sealed, payload, answers),
              mcp::StateCheck::Expired);
    EXPECT_EQ(mcp::open_state(kKey, b, 0, "", payload, answers), mcp::StateCheck::Malformed);
    EXPECT_EQ(mcp::seal_state({}, b, 0, "", state), 0u) << "no key, no state";
    const std::string big(mcp::kMaxStatePayload, 'x');
    EXPECT_EQ(mcp::seal_state(kKey, b, 0, big, state), 0u) << "answers over the payload limit";
}

TEST(InputRound, AnswersAreLookedUpAndUsedOnesCarriedOnce) {
    auto round = std::make_unique<mcp::InputRound>();
    ASSERT_TRUE(round->load(R"({"user_name":{"action":"accept","content":{"name":"Ada"}},"other":{"x":1}})", ""));
    round->set_caps(mcp::kClientElicitation);
    EXPECT_TRUE(round->answer("user_name").find("content").find("name").string_equals("Ada"));
    EXPECT_TRUE(round->answer("user_name").valid());
    EXPECT_FALSE(round->answer("missing").valid());
    EXPECT_EQ(round->used(), R"("user_name":{"action":"accept","content":{"name":"Ada"}})")
        << "used once, carried once";
    EXPECT_FALSE(round->pending());
    auto ask = [&](const char* key, const char* method, std::string params) {
        auto buf = round->params_buffer();
        std::copy(params.begin(), params.end(), buf.begin());
        return round->ask(key, method, params.size());
    };
    EXPECT_TRUE(ask("color", "elicitation/create", R"({"message":"Colour?"})"));
    EXPECT_FALSE(ask("llm", "sampling/createMessage", "{}")) << "sampling was not declared";
    EXPECT_FALSE(ask("who", "tools/call", "{}")) << "not a request a server sends";
    EXPECT_TRUE(round->pending());
    EXPECT_EQ(round->requests(), R"("color":{"method":"elicitation/create","params":{"message":"Colour?"}})");
    EXPECT_FALSE(round->load("[1]", "")) << "answers are an object";
    EXPECT_FALSE(round->pending()) << "a new load starts a new round";
    EXPECT_TRUE(round->load("", ""));
    EXPECT_FALSE(round->answer("user_name").valid());
    // Answers a state carried, and a newer one the client sent again under the same key.
    ASSERT_TRUE(round->load(R"({"a":{"v":2}})", R"("a":{"v":1},"b":{"v":3})"));
    EXPECT_EQ(round->answer("a").find("v").as_int64(), 2) << "the fresh answer wins";
    EXPECT_EQ(round->answer("b").find("v").as_int64(), 3);
    EXPECT_EQ(round->used(), R"("a":{"v":2},"b":{"v":3})");
    EXPECT_TRUE(round->used_fits());
    EXPECT_FALSE(round->load("", R"("a":)")) << "carried members that do not parse";
}

// The dispatcher with the conformance fixtures and asynchronous calls, as the kernel runs it.
struct Started {
    mcp::PendingCall call;
    std::string answers, carried;
};
std::vector<Started> g_started;
bool start_call(const mcp::Tool&, const json::Value&, const mcp::PendingCall& call, mcp::ToolError&) {
    g_started.push_back({ call, std::string(call.answers), std::string(call.carried) });
    return true;
}

struct Fixture {
    Fixture() {
        for (const auto& t : fx::tools())
            allow.emplace_back(t.name);
        for (const auto& p : fx::prompts())
            prompt_allow.emplace_back(p.name);
        config.tools = fx::tools();
        config.allowlist = allow;
        config.prompts = fx::prompts();
        config.prompt_allowlist = prompt_allow;
        config.anonymous_scopes = mcp::kConformanceFixtures;
        hooks.now_rfc3339_fn = fixed_time;
        hooks.now_ns_fn = now_ns;
        hooks.start_call = start_call;
        hooks.audit_fn = record_event;
        config.state_key = kKey;
        g_started.clear();
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
    }
    std::string handle(const std::string& msg) {
        g_now += kSecond; // calls a second apart: no rate limit
        std::vector<char> out(1 << 16);
        return std::string(out.data(), server->handle(msg, session, out));
    }
    static std::string request(const char* method, const std::string& params,
                               const char* caps = R"({"elicitation":{}})") {
        return std::string(R"({"jsonrpc":"2.0","id":5,"method":")") + method + R"(","params":{)" + params +
               R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":)" +
               caps + "}}}";
    }
    // A tools/call of the elicitation fixture with these extra params; the started call, if any.
    std::string call(const std::string& extra) {
        return handle(
            request("tools/call", R"("name":"test_input_required_result_elicitation","arguments":{})" + extra));
    }
    std::vector<std::string_view> allow, prompt_allow;
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter;
    mcp::Session session;
    std::unique_ptr<mcp::Server> server;
};

// What the kernel does when the body asked: the dispatcher's InputRequiredResult.
std::string input_required(Fixture& f, const mcp::PendingCall& call, std::string_view requests, std::string_view used,
                           bool used_fits = true) {
    std::vector<char> out(1 << 16);
    return std::string(out.data(), f.server->input_required(call, requests, used, used_fits, out));
}

TEST(InputRounds, ACallAsksAndIsAnsweredInTheNextRound) {
    Fixture f;
    EXPECT_EQ(f.call(""), "") << "deferred to the tool task";
    ASSERT_EQ(g_started.size(), 1u);
    EXPECT_EQ(g_started[0].answers, "") << "no answers in a first round";
    EXPECT_EQ(g_started[0].call.client_caps, mcp::kClientElicitation);
    const std::string asked = R"("user_name":{"method":"elicitation/create","params":{"message":"Name?"}})";
    Reply r1(input_required(f, g_started[0].call, asked, ""));
    EXPECT_EQ(r1.root.find("id").as_int64(), 5);
    EXPECT_TRUE(r1.result().find("resultType").string_equals("input_required")) << r1.text;
    EXPECT_TRUE(r1.result().find("inputRequests").find("user_name").find("method").string_equals("elicitation/create"));
    std::string state1(r1.result().find("requestState").plain_string().value_or(""));
    ASSERT_FALSE(state1.empty());
    EXPECT_EQ(g_events.back().code, std::string_view("input_required"));

    // Round two: the answer, and the state back; the body used the answer and asks for more.
    const std::string answer = R"({"action":"accept","content":{"name":"Ada"}})";
    EXPECT_EQ(f.call(R"(,"inputResponses":{"user_name":)" + answer + R"(},"requestState":")" + state1 + "\""), "");
    ASSERT_EQ(g_started.size(), 2u);
    EXPECT_EQ(g_started[1].answers, R"({"user_name":)" + answer + "}");
    EXPECT_EQ(g_started[1].carried, "") << "the state of a first round carries nothing";
    Reply r2(input_required(f, g_started[1].call, R"("color":{"method":"elicitation/create","params":{}})",
                            R"("user_name":)" + answer));
    std::string state2(r2.result().find("requestState").plain_string().value_or(""));
    EXPECT_NE(state2, state1);

    // Round three: only the new answer is sent; the state carries the first.
    const std::string color = R"({"action":"accept","content":{"color":"blue"}})";
    EXPECT_EQ(f.call(R"(,"inputResponses":{"color":)" + color + R"(},"requestState":")" + state2 + "\""), "");
    ASSERT_EQ(g_started.size(), 3u);
    EXPECT_EQ(g_started[2].answers, R"({"color":)" + color + "}");
    EXPECT_EQ(g_started[2].carried, R"("user_name":)" + answer);

    // A body whose used answers no longer fit in a state is refused, not asked again for ever.
    Reply full(
        input_required(f, g_started[2].call, R"("more":{"method":"elicitation/create","params":{}})", "", false));
    EXPECT_EQ(Reply::plain(full.tool_error().find("error").find("details").find("reason")), "input_too_large")
        << full.text;
}

TEST(InputRounds, BadInputIsAProtocolError) {
    Fixture f;
    f.call("");
    Reply r1(input_required(f, g_started[0].call, R"("user_name":{"method":"elicitation/create","params":{}})", ""));
    std::string state(r1.result().find("requestState").plain_string().value_or(""));
    size_t started = g_started.size();
    auto refused = [&](const std::string& extra, const char* reason) {
        Reply r(f.call(extra));
        EXPECT_EQ(r.root.find("error").find("code").as_int64(), -32602) << extra << ": " << r.text;
        EXPECT_EQ(r.reason(), reason) << extra;
    };
    refused(R"(,"inputResponses":null)", "invalid_input_responses");
    refused(R"(,"inputResponses":{"user_name":12345})", "invalid_input_responses");
    refused(R"(,"requestState":")" + state + R"(-TAMPERED")", "request_state_malformed");
    std::string flipped = state;
    flipped[5] = flipped[5] == 'A' ? 'B' : 'A';
    refused(R"(,"requestState":")" + flipped + "\"", "request_state_forged");
    refused(R"(,"requestState":7)", "request_state_malformed");
    EXPECT_EQ(g_started.size(), started) << "nothing refused ever ran";
    // The state of one tool does not open a call of another.
    Reply other(f.handle(Fixture::request(
        "tools/call",
        R"("name":"test_input_required_result_request_state","arguments":{},"requestState":")" + state + "\"")));
    EXPECT_EQ(other.reason(), "request_state_foreign") << other.text;
    // Nor after its lifetime.
    g_now += mcp::kStateLifetimeNs;
    refused(R"(,"requestState":")" + state + "\"", "request_state_expired");
    // Extra answers are simply passed along (the body ignores keys it did not ask for).
    EXPECT_EQ(f.call(R"(,"inputResponses":{"unknown_extra_key":{"foo":"bar"}})"), "");
}

TEST(InputRounds, APromptAsksInsideTheDispatcher) {
    Fixture f;
    const std::string get = R"("name":"test_input_required_result_prompt")";
    Reply r1(f.handle(Fixture::request("prompts/get", get)));
    EXPECT_TRUE(r1.result().find("resultType").string_equals("input_required")) << r1.text;
    json::Value ask = r1.result().find("inputRequests").find("user_context");
    EXPECT_TRUE(ask.find("method").string_equals("elicitation/create"));
    EXPECT_TRUE(ask.find("params").find("requestedSchema").find("properties").find("context").is_object());
    std::string state(r1.result().find("requestState").plain_string().value_or(""));
    Reply r2(f.handle(Fixture::request(
        "prompts/get",
        get +
            R"(,"inputResponses":{"user_context":{"action":"accept","content":{"context":"tests"}}},"requestState":")" +
            state + "\"")));
    EXPECT_TRUE(r2.result().find("resultType").string_equals("complete")) << r2.text;
    std::string text(r2.result().find("messages").at(0).find("content").find("text").raw());
    EXPECT_NE(text.find("tests"), std::string::npos) << text;
    // A client that cannot be asked gets an error, not a round it could never finish.
    Reply no(f.handle(Fixture::request("prompts/get", get, "{}")));
    EXPECT_TRUE(no.root.find("error").valid()) << no.text;
    // The 2025 revisions: the prompt answers without asking.
    Reply old(f.handle(
        R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"test_input_required_result_prompt"}})"));
    EXPECT_TRUE(old.result().find("messages").is_array()) << old.text;
    // Other methods never answer with a round.
    Reply list(f.handle(Fixture::request("tools/list", R"("cursor":"0")")));
    EXPECT_TRUE(list.result().find("resultType").string_equals("complete"));
}

TEST(InputRounds, FixturesSummarizeTheirAnswers) {
    const fx::InputTool* tool = fx::input_tool("test_input_required_result_multiple_inputs");
    ASSERT_NE(tool, nullptr);
    ASSERT_EQ(tool->asks.size(), 3u);
    const char* answers[] = { R"({"action":"accept","content":{"name":"Alice"}})",
                              R"({"role":"assistant","content":{"type":"text","text":"Hello there!"},"model":"m"})",
                              R"({"roots":[{"uri":"file:///test/root","name":"Test Root"}]})" };
    const char* expected[] = { "Alice", "Hello there!", "file:///test/root" };
    for (size_t i = 0; i < 3; ++i) {
        json::Node nodes[64];
        auto doc = json::Document::parse(answers[i], nodes);
        ASSERT_TRUE(doc.ok());
        char out[256];
        mcp::ToolError err;
        ASSERT_TRUE(fx::summarize(tool->asks[i], doc->root(), out, sizeof out, err)) << err.message;
        EXPECT_NE(std::string(out).find(expected[i]), std::string::npos) << out;
        EXPECT_EQ(std::string(out).rfind(tool->asks[i].key, 0), 0u) << out;
    }
    {
        // A long answer is cut between characters, never inside one: the text stays valid UTF-8.
        std::string multi(106, 'b'); // with {"name":" before it, byte 120 is inside an é
        for (int i = 0; i < 10; ++i)
            multi += "\xc3\xa9"; // é as UTF-8 bytes in the answer's text
        const std::string answer = R"({"action":"accept","content":{"name":")" + multi + R"("}})";
        json::Node n[16];
        auto doc = json::Document::parse(answer, n);
        ASSERT_TRUE(doc.ok());
        char cut[256];
        mcp::ToolError e;
        ASSERT_TRUE(fx::summarize(tool->asks[0], doc->root(), cut, sizeof cut, e));
        EXPECT_TRUE(json::valid_utf8(cut)) << cut;
        EXPECT_LT(std::string(cut).size(), std::string("user_name: ").size() + 121);
    }
    json::Node nodes[16];
    auto declined = json::Document::parse(R"({"action":"decline"})", nodes);
    char out[64];
    mcp::ToolError err;
    EXPECT_FALSE(fx::summarize(tool->asks[0], declined->root(), out, sizeof out, err));
    EXPECT_STREQ(err.reason, "input_declined");
    // Every ask's params are one JSON object a client can read.
    for (const char* name : { "test_input_required_result_elicitation", "test_input_required_result_sampling",
                              "test_input_required_result_list_roots", "test_input_required_result_multi_round",
                              "test_input_required_result_capabilities", "test_streaming_elicitation" }) {
        const fx::InputTool* t = fx::input_tool(name);
        ASSERT_NE(t, nullptr) << name;
        for (const auto& a : t->asks) {
            json::Node n[128];
            auto p = json::Document::parse(a.params, n);
            EXPECT_TRUE(p.ok() && p->root().is_object()) << name << " " << a.key;
            EXPECT_NE(mcp::capability_for(a.method), 0) << a.method;
        }
    }
}

} // namespace

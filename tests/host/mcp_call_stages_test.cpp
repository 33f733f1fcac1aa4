// Where the time of a tools/call goes (mcp/server/call_stages.h): the table itself, and which
// stages the Server times for an inline call, a refused one and one the host runs. The clock is
// the test's: it moves 10 ns per reading, so every figure is deterministic.
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using Stages = mcp::CallStages;

uint64_t g_clock = 0;
uint64_t tick() { return g_clock += 10; }

bool echo_tool(const json::Value&, json::Writer& w, mcp::ToolError&) {
    w.begin_object().key("ok").boolean(true).end_object();
    return true;
}

const char* kSchema = "{\"type\":\"object\"}";
const mcp::Tool kTools[] = { { "echo", "Echo", "Echoes", kSchema, kSchema, 0, echo_tool } };
const std::string_view kAllow[] = { "echo" };

mcp::PendingCall g_started;
bool take_call(const mcp::Tool&, const json::Value&, const mcp::PendingCall& call, mcp::ToolError&) {
    g_started = call;
    return true;
}

struct Fixture {
    explicit Fixture(bool host_runs_calls = false) : server(config, limiter, hooks) {
        config.tools = kTools;
        config.allowlist = kAllow;
        hooks.now_ns_fn = tick;
        if (host_runs_calls)
            hooks.start_call = take_call;
        g_clock = 0;
    }
    std::string call(const std::string& msg) {
        std::vector<char> out(1 << 16);
        size_t n = server.handle(msg, session, out);
        return std::string(out.data(), n);
    }
    uint64_t count(Stages::Stage s) const { return server.stages().totals(s).count; }
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter { mcp::LimitConfig { 100, 100, 10 } };
    mcp::Session session;
    mcp::Server server;
};

const std::string kCall = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}})";

} // namespace

TEST(CallStages, KeepsCountSumMaxAndALog2Histogram) {
    Stages t;
    for (uint64_t ns : { 1, 100, 100, 100, 5000 })
        t.add(Stages::Body, ns);
    const auto& b = t.totals(Stages::Body);
    EXPECT_EQ(b.count, 5u);
    EXPECT_EQ(b.sum_ns, 5301u);
    EXPECT_EQ(b.max_ns, 5000u);
    EXPECT_EQ(b.buckets[0], 1u);  // under 2 ns
    EXPECT_EQ(b.buckets[6], 3u);  // 64..127
    EXPECT_EQ(b.buckets[12], 1u); // 4096..8191
    EXPECT_EQ(Stages::quantile_ns(b, 50), 127u) << "the upper bound of the median's bucket";
    EXPECT_EQ(Stages::quantile_ns(b, 99), 5000u) << "capped at the largest seen";
    EXPECT_EQ(t.totals(Stages::Parse).count, 0u);
    EXPECT_EQ(Stages::quantile_ns(t.totals(Stages::Parse), 50), 0u);
    t.add_since(Stages::Send, 50, 40); // a clock that went backwards counts as nothing
    EXPECT_EQ(t.totals(Stages::Send).sum_ns, 0u);
    EXPECT_STREQ(Stages::name(Stages::Call), "call");
    EXPECT_STREQ(Stages::name(Stages::Authorise), "authorise");
}

TEST(CallStages, AnInlineCallIsTimedThroughItsAudit) {
    Fixture f;
    for (int i = 0; i < 3; ++i)
        ASSERT_NE(f.call(kCall).find("\"result\""), std::string::npos);
    for (auto s : { Stages::Parse, Stages::Authenticate, Stages::Provenance, Stages::Route, Stages::Authorise,
                    Stages::Validate, Stages::Admit, Stages::Body, Stages::Encode, Stages::Audit })
        EXPECT_EQ(f.count(s), 3u) << Stages::name(s);
    // Handing the call to a host, the transport's send and the whole call are the host's.
    for (auto s : { Stages::Start, Stages::Send, Stages::Call })
        EXPECT_EQ(f.count(s), 0u) << Stages::name(s);
    uint64_t sum = 0;
    for (size_t s = 0; s < Stages::kCount; ++s)
        sum += f.server.stages().totals(static_cast<Stages::Stage>(s)).sum_ns;
    EXPECT_GT(sum, 0u);
    EXPECT_LE(sum, g_clock) << "one stage after another, within the clock's readings";
}

TEST(CallStages, OnlyToolsCallsAreTimedAndOnlyAsFarAsTheyGo) {
    Fixture f;
    f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
    f.call(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
    for (size_t s = 0; s < Stages::kCount; ++s)
        EXPECT_EQ(f.count(static_cast<Stages::Stage>(s)), 0u) << Stages::name(static_cast<Stages::Stage>(s));
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}})");
    EXPECT_EQ(f.count(Stages::Provenance), 1u);
    EXPECT_EQ(f.count(Stages::Route), 0u) << "refused as unknown: routed no further";
}

TEST(CallStages, ACallTheHostRunsIsTimedToItsStartThenAtItsAnswer) {
    Fixture f(true);
    EXPECT_EQ(f.call(kCall), "") << "answered later";
    EXPECT_EQ(f.count(Stages::Start), 1u);
    EXPECT_EQ(f.count(Stages::Admit), 1u);
    EXPECT_EQ(f.count(Stages::Body), 0u) << "the host's to time";
    EXPECT_EQ(f.count(Stages::Encode), 0u);
    EXPECT_GT(g_started.received_ns, 0u) << "the call carries when it arrived";
    std::vector<char> out(1 << 16);
    EXPECT_GT(f.server.finish_call(g_started, true, R"({"ok":true})", {}, false, out), 0u);
    EXPECT_EQ(f.count(Stages::Encode), 1u);
    EXPECT_EQ(f.count(Stages::Audit), 1u);
    EXPECT_EQ(f.count(Stages::Call), 0u) << "ends when the host has sent it";
}

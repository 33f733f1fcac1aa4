// Provenance from outside the dispatcher: every admitted request gets a node before any policy
// decides (refused calls too), nodes record the client as it declared itself and are UNTRUSTED,
// a refused authentication makes none, and every audited decision names its node, action and
// target. Also the text form of node ids.
#include <json/json.h>
#include <mcp/policy/provenance.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include "support/mcp_reply.h"

#include <memory>
#include <string>
#include <vector>

namespace {

bool echo_tool(const json::Value&, json::Writer& w, mcp::ToolError&) {
    w.begin_object().end_object();
    return true;
}

const char* kSchema =
    R"({"type":"object","properties":{"collection":{"type":"string","maxLength":64},)"
    R"("ids":{"type":"array","maxItems":100,"items":{"type":"integer"}}},"additionalProperties":false})";
const char* kOut = R"({"type":"object"})";

const mcp::Tool kTools[] = {
    { "vector_delete", "Delete", "", kSchema, kOut, mcp::kVectorWrite, echo_tool, mcp::ToolResult::Structured, 0,
      "delete", "collection" },
    { "plain", "Plain", "", kSchema, kOut, 0, echo_tool },
    { "admin_only", "Admin", "", kSchema, kOut, mcp::kKernelAdmin, echo_tool },
};
const std::string_view kAllow[] = { "vector_delete", "plain", "admin_only" };

struct Kept {
    uint64_t parent;
    std::string principal, transport, client_name, client_version, request_id, method;
    uint32_t session;
    mcp::Integrity integrity;
};
std::vector<Kept> g_nodes;
uint64_t keep_node(const mcp::ProvenanceNode& n) {
    g_nodes.push_back({ n.parent, n.principal ? n.principal->name : "anonymous", n.transport,
                        std::string(n.client_name), std::string(n.client_version), std::string(n.request_id),
                        std::string(n.method), n.session, n.integrity });
    return mcp::make_provenance_id(0xabcd0001u, static_cast<uint32_t>(g_nodes.size()));
}

struct Decision {
    uint64_t node;
    std::string action, target, name, code;
    mcp::AuditOutcome outcome;
    std::string transport;
};
std::vector<Decision> g_decisions;
void keep_decision(const mcp::AuditEvent& e) {
    g_decisions.push_back({ e.provenance_id, e.action ? e.action : "", std::string(e.target), std::string(e.name),
                            e.code ? e.code : "", e.outcome, e.transport ? e.transport : "" });
}

struct Fixture {
    Fixture() {
        config.tools = kTools;
        config.allowlist = kAllow;
        hooks.now_rfc3339_fn = fixed_time;
        hooks.now_ns_fn = now_ns;
        config.keys = &keys;
        hooks.audit_fn = keep_decision;
        hooks.provenance_fn = keep_node;
        config.transport = "http";
        g_nodes.clear();
        g_decisions.clear();
        EXPECT_TRUE(keys.add("op", mcp::Role::Operator, "operator-secret-key-1").ok());
        session.principal = *keys.authenticate("operator-secret-key-1");
        session.origin = 42;
        server = std::make_unique<mcp::Server>(config, limiter, hooks);
    }
    std::string call(const std::string& msg) {
        std::vector<char> out(1 << 16);
        return std::string(out.data(), server->handle(msg, session, out));
    }
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::CallLimiter limiter { mcp::LimitConfig { 100, 100, 10 } };
    mcp::KeyStore keys;
    mcp::Session session;
    std::unique_ptr<mcp::Server> server;
};

} // namespace

TEST(Provenance, IdTextRoundTrips) {
    char text[mcp::kProvenanceIdText];
    uint64_t id = mcp::make_provenance_id(0x9c1e02aa, 17);
    EXPECT_EQ(mcp::format_provenance_id(id, text), 11u);
    EXPECT_STREQ(text, "9c1e02aa-17");
    EXPECT_EQ(mcp::parse_provenance_id(text), id);
    uint64_t widest = mcp::make_provenance_id(0xffffffff, 0xffffffff);
    mcp::format_provenance_id(widest, text);
    EXPECT_STREQ(text, "ffffffff-4294967295");
    EXPECT_EQ(mcp::parse_provenance_id(text), widest);
    EXPECT_EQ(mcp::format_provenance_id(0, text), 0u) << "no node: empty text";
    for (const char* bad : { "", "9c1e02aa", "9c1e02aa-", "9c1e02aa-0", "9c1e02aa-017", "00000000-5", "9C1E02AA-5",
                             "9c1e02a-5", "9c1e02aa-4294967296", "9c1e02aa-5x", "9c1e02aa_5", "9c1e02aa-99999999999" })
        EXPECT_FALSE(mcp::parse_provenance_id(bad).has_value()) << bad;
}

TEST(Provenance, EveryAdmittedRequestGetsAnUntrustedNodeBeforePolicy) {
    Fixture f;
    f.call(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},)"
        R"("clientInfo":{"name":"inspector","version":"0.17.2"}}})");
    EXPECT_TRUE(g_nodes.empty()) << "initialize decides nothing: no node";
    f.call(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vector_delete","arguments":{"collection":"docs","ids":[1,2,3]}}})");
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_only","arguments":{}}})");
    f.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}})");
    f.call(R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})");
    ASSERT_EQ(g_nodes.size(), 3u) << "the call that runs and both refused ones; tools/list is not audited";
    for (const auto& n : g_nodes) {
        EXPECT_EQ(n.integrity, mcp::Integrity::Untrusted) << "whatever a client sends is untrusted";
        EXPECT_EQ(n.parent, 0u);
        EXPECT_EQ(n.principal, "op");
        EXPECT_EQ(n.transport, "http");
        EXPECT_EQ(n.session, 42u);
        EXPECT_EQ(n.client_name, "inspector") << "as declared at initialize";
        EXPECT_EQ(n.client_version, "0.17.2");
        EXPECT_EQ(n.method, "tools/call");
    }
    EXPECT_EQ(g_nodes[0].request_id, "2");
    ASSERT_EQ(g_decisions.size(), 3u);
    EXPECT_EQ(g_decisions[0].outcome, mcp::AuditOutcome::Allow);
    EXPECT_EQ(g_decisions[0].node, mcp::make_provenance_id(0xabcd0001u, 1));
    EXPECT_EQ(g_decisions[0].action, "delete");
    EXPECT_EQ(g_decisions[0].target, "docs, 3 ids");
    EXPECT_EQ(g_decisions[1].code, "auth_insufficient_role");
    EXPECT_EQ(g_decisions[1].node, mcp::make_provenance_id(0xabcd0001u, 2)) << "a refusal names its node too";
    EXPECT_EQ(g_decisions[1].action, "call") << "a tool without an action of its own";
    EXPECT_EQ(g_decisions[1].target, "");
    EXPECT_EQ(g_decisions[2].code, "validation_unknown_tool");
    EXPECT_EQ(g_decisions[2].node, mcp::make_provenance_id(0xabcd0001u, 3));
}

TEST(Provenance, ARefusedKeyMakesNoNode) {
    Fixture f;
    f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{},)"
           R"("_meta":{"io.basalt/api-key":"wrong-key-wrong-key"}}})");
    EXPECT_TRUE(g_nodes.empty()) << "not admitted: a flood of bad keys cannot fill the ring";
    ASSERT_EQ(g_decisions.size(), 1u);
    EXPECT_EQ(g_decisions[0].node, 0u);
    EXPECT_EQ(g_decisions[0].action, "authenticate");
}

TEST(Provenance, StatelessRequestsDeclareTheirClientPerRequest) {
    Fixture f;
    f.call(
        R"({"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"plain","arguments":{},"_meta":{)"
        R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
        R"("io.modelcontextprotocol/clientInfo":{"name":"sdk-client-with-a-very-long-name-over-32-bytes","version":"2.0.0"}}}})");
    ASSERT_EQ(g_nodes.size(), 1u);
    EXPECT_EQ(g_nodes[0].client_name, "sdk-client-with-a-very-long-nam") << "cut to fit the node";
    EXPECT_EQ(g_nodes[0].client_version, "2.0.0");
    EXPECT_EQ(g_nodes[0].request_id, "r1");
    ASSERT_EQ(g_decisions.size(), 1u);
    EXPECT_EQ(g_decisions[0].node, mcp::make_provenance_id(0xabcd0001u, 1));
}

namespace {
std::vector<mcp::PendingCall> g_started;
bool start_async(const mcp::Tool&, const json::Value&, const mcp::PendingCall& call, mcp::ToolError&) {
    g_started.push_back(call);
    return true;
}
} // namespace

TEST(Provenance, AnAsynchronousCallCarriesItsNodeToTheHostAndToItsAudit) {
    Fixture f;
    f.hooks.start_call = start_async;
    g_started.clear();
    EXPECT_EQ(
        f.call(
            R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"vector_delete","arguments":{"collection":"docs","ids":[4]}}})"),
        "");
    ASSERT_EQ(g_started.size(), 1u);
    EXPECT_EQ(g_started[0].provenance_id, mcp::make_provenance_id(0xabcd0001u, 1)) << "the host binds the token to it";
    EXPECT_STREQ(g_started[0].action, "delete");
    EXPECT_STREQ(g_started[0].target, "docs, 1 ids");
    std::vector<char> out(8192);
    EXPECT_GT(f.server->finish_call(g_started[0], true, "{}", {}, false, out), 0u);
    ASSERT_EQ(g_decisions.size(), 1u);
    EXPECT_EQ(g_decisions[0].node, g_started[0].provenance_id);
    EXPECT_EQ(g_decisions[0].target, "docs, 1 ids");
    EXPECT_EQ(g_decisions[0].outcome, mcp::AuditOutcome::Allow);
}

TEST(Provenance, AnAnonymousRequestGetsItsNodeOnlyOnceAdmitted) {
    Fixture f;
    f.session.principal = nullptr;
    f.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_only","arguments":{}}})");
    f.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}})");
    EXPECT_TRUE(g_nodes.empty()) << "refused before the limiter: a flood of these cannot churn the ring";
    ASSERT_EQ(g_decisions.size(), 2u);
    EXPECT_EQ(g_decisions[0].node, 0u);
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"plain","arguments":{}}})");
    ASSERT_EQ(g_nodes.size(), 1u);
    EXPECT_EQ(g_nodes[0].principal, "anonymous");
    EXPECT_EQ(g_nodes[0].request_id, "3");
    ASSERT_EQ(g_decisions.size(), 3u);
    EXPECT_EQ(g_decisions[2].node, mcp::make_provenance_id(0xabcd0001u, 1));
}

// A session may name its own transport (the console's decisions, which the HTTP bridge carries
// out): its nodes and decisions say it, the server's other sessions keep the server's.
TEST(Provenance, ASessionNamesItsOwnTransport) {
    Fixture f;
    f.session.transport = "console";
    f.call(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},)"
        R"("clientInfo":{"name":"console","version":"1"}}})");
    f.call(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vector_delete","arguments":{"collection":"docs","ids":[1]}}})");
    f.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_only","arguments":{}}})");
    ASSERT_EQ(g_nodes.size(), 2u);
    ASSERT_EQ(g_decisions.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(g_nodes[i].transport, "console");
        EXPECT_EQ(g_decisions[i].transport, "console") << g_decisions[i].name;
    }
    mcp::Session other;
    other.principal = f.session.principal;
    other.origin = 43;
    std::vector<char> out(1 << 16);
    f.server->handle(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})",
        other, out);
    f.server->handle(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plain","arguments":{}}})",
                     other, out);
    ASSERT_EQ(g_decisions.size(), 3u);
    EXPECT_EQ(g_decisions[2].transport, "http");
}

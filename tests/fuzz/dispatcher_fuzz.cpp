// libFuzzer target for the MCP dispatcher (mcp::Server), set up like tests/host/mcp_server_test:
// a few toy tools and resources behind allowlists, two API keys, a call limiter, a fixed clock.
//
// Each input is used as:
//  1. One message (the whole input), handled twice from the same starting state: once with the
//     kernel's reply buffer (192 KiB) and once with a small one. Checked: the reply fits its
//     buffer; it is answered exactly when JSON-RPC 2.0 says so (requests and malformed messages,
//     not notifications or responses) and echoes the request's id; a non-empty reply is valid
//     JSON with the JSON-RPC shape and, on failure, the canonical envelope; a reply that fits
//     the small buffer is byte-identical there, one that does not becomes a well-formed fallback
//     or nothing.
//  2. If it has newlines: a line sequence fed through the serial transport's LineFramer into
//     one Session (starting anonymous, so initialize with an API key, then tools/call or
//     resources/read are reachable), with an overlong-line report and a log notification per
//     line, every reply checked as above.
// Throughout, the audit hook checks the policy: no tool, resource or prompt runs unless
// allowlisted and the caller holds its scopes, and every tool that ran was audited as allowed or
// errored. Prompts, the resource template and completion come from the conformance fixtures
// (their scope held by admin only), with subscriptions on.
#include <json/json.h>
#include <json/writer.h>
#include <mcp/fixtures/conformance.h>
#include <mcp/policy/roles.h>
#include <mcp/server/server.h>
#include <mcp/transport/line_framer.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "fuzz_check.h"

namespace {

#define CHECK(cond) FUZZ_CHECK("dispatcher_fuzz", cond)

// --- toy tools -----------------------------------------------------------------------------

int g_tool_runs = 0; // tools run during the current message

bool echo_tool(const json::Value& args, json::Writer& w, mcp::ToolError&) {
    ++g_tool_runs;
    char text[256];
    auto n = args.find("text").string_into(text);
    w.begin_object().key("echo").string(std::string_view(text, n ? *n : 0)).end_object();
    return true;
}

bool add_tool(const json::Value& args, json::Writer& w, mcp::ToolError& err) {
    ++g_tool_runs;
    auto a = args.find("a").as_int64(), b = args.find("b").as_int64();
    if (!a || !b || (*b > 0 && *a > INT64_MAX - *b) || (*b < 0 && *a < INT64_MIN - *b)) {
        err = { mcp::ErrorCode::ValidationFailed, "a and b must be integers whose sum fits" };
        return false;
    }
    w.begin_object().key("sum").number(*a + *b).end_object();
    return true;
}

bool missing_tool(const json::Value&, json::Writer&, mcp::ToolError& err) {
    ++g_tool_runs;
    err = { mcp::ErrorCode::NotFound, "nothing there" };
    return false;
}

// Output of any size the caller asks for: past 64 KiB it is the output limit, past the reply
// buffer the server's fallback.
bool fill_tool(const json::Value& args, json::Writer& w, mcp::ToolError&) {
    ++g_tool_runs;
    uint64_t n = args.find("n").as_uint64().value_or(3);
    w.begin_object().key("items").begin_array();
    for (uint64_t i = 0; i < n && i < 20000 && w.ok(); ++i)
        w.number(i * 1000003);
    w.end_array().end_object();
    return true;
}

// Reaches most of the schema validator: formats, enums, arrays, exclusive bounds.
bool store_tool(const json::Value& args, json::Writer& w, mcp::ToolError&) {
    ++g_tool_runs;
    auto name = args.find("name").plain_string();
    w.begin_object().key("stored").string(name.value_or("")).key("tags").number(uint64_t(args.find("tags").size()));
    w.end_object();
    return true;
}

// Leaves its object open: "malformed tool output".
bool broken_tool(const json::Value&, json::Writer& w, mcp::ToolError&) {
    ++g_tool_runs;
    w.begin_object().key("half");
    return true;
}

const char* kEchoSchema = R"({"type":"object","properties":{"text":{"type":"string","maxLength":64}},)"
                          R"("additionalProperties":false})";
const char* kAddSchema = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},)"
                         R"("required":["a","b"]})";
const char* kFillSchema = R"({"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":100000}}})";
const char* kStoreSchema =
    R"({"type":"object","properties":{"name":{"type":"string","format":"name","minLength":1,"maxLength":32},)"
    R"("path":{"type":"string","format":"path","maxLength":128},)"
    R"("tags":{"type":"array","items":{"type":"string","enum":["a","b","c\u00e9"]},"minItems":0,"maxItems":4},)"
    R"("ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"mode":{"enum":["fast","slow",1,null]}},)"
    R"("required":["name"],"additionalProperties":false})";
const char* kAnySchema = R"({"type":"object"})";
const char* kOut = R"({"type":"object"})";

// Writes a content array, or (n odd) an object where the array belongs.
bool content_tool(const json::Value& args, json::Writer& w, mcp::ToolError&) {
    ++g_tool_runs;
    if (args.find("n").as_int64().value_or(0) % 2)
        w.begin_object().end_object();
    else
        w.begin_array().begin_object().key("type").string("text").key("text").string("hi").end_object().end_array();
    return true;
}

const mcp::Tool kTools[] = {
    { "content", "Content", "Writes its content array", kFillSchema, nullptr, 0, content_tool,
      mcp::ToolResult::Content },
    { "echo", "Echo", "Echoes text", kEchoSchema, kOut, mcp::kKernelRead, echo_tool },
    { "add", "Add", "Adds two integers", kAddSchema, kOut, 0, add_tool },
    { "admin_only", "Admin", "Needs kernel:admin", kEchoSchema, kOut, mcp::kKernelAdmin, echo_tool },
    { "missing", "Missing", "Fails", kAnySchema, kOut, 0, missing_tool },
    { "fill", "Fill", "Output of a requested size", kFillSchema, nullptr, mcp::kVectorRead, fill_tool },
    { "broken", "Broken", "Malformed output", kAnySchema, kOut, 0, broken_tool },
    { "store", "Store", "Validated arguments", kStoreSchema, kOut, mcp::kVectorWrite, store_tool },
    { "hidden", "Hidden", "Not allowlisted", kAnySchema, kOut, 0, echo_tool },
};
const std::string_view kAllow[] = { "content", "echo", "add", "admin_only", "missing", "fill", "broken", "store" };

int g_resource_reads = 0;
bool status_resource(json::Writer& w, mcp::ToolError&) {
    ++g_resource_reads;
    w.key("uptime_ms").number(uint64_t(42));
    return true;
}
bool audit_resource(json::Writer& w, mcp::ToolError&) {
    ++g_resource_reads;
    w.key("entries").begin_array().end_array();
    return true;
}
bool text_contents(const mcp::ResourceRead& in, json::Writer& w, mcp::ToolError&) {
    ++g_resource_reads;
    w.key("text").string(in.uri);
    return true;
}
uint64_t every_second(uint64_t now_ns) { return now_ns / 1000000000; }
const mcp::Resource kResources[] = {
    { "test://status", "status", "Status", "A status snapshot", mcp::kKernelRead, "3", status_resource },
    { "test://audit", "audit", "Audit", "Needs audit:read", mcp::kAuditRead, "1", audit_resource },
    { "test://hidden", "hidden", "Hidden", "Not allowlisted", 0, "1", status_resource },
    { "test://text", "text", "Text", "Text contents, changes every second", 0, "1", nullptr, "text/plain",
      text_contents, every_second },
};
// The fixtures' template (test://template/{id}/data) is listed too.
const std::string_view kResourceAllow[] = { "test://status", "test://audit", "test://text",
                                            "test://template/{id}/data" };
const std::string_view kPromptAllow[] = { "test_simple_prompt", "test_prompt_with_arguments",
                                          "test_prompt_with_embedded_resource" };

// --- policy checks through the audit hook --------------------------------------------------

int g_allowed_runs = 0;  // audited tool calls that were admitted (allow or error)
int g_allowed_reads = 0; // the same for resource reads
const mcp::KeyStore* g_keys = nullptr;

template <typename T, size_t N>
const T* find_named(const T (&items)[N], std::string_view name, const char* T::*field) {
    for (const auto& item : items)
        if (name == item.*field)
            return &item;
    return nullptr;
}

template <size_t N>
bool listed(const std::string_view (&list)[N], std::string_view name) {
    for (auto n : list)
        if (n == name)
            return true;
    return false;
}

void on_audit(const mcp::AuditEvent& e) {
    // Every view must be readable (ASan checks the bytes) and every enum in range.
    size_t sum = 0;
    for (char c : e.request_id)
        sum += uint8_t(c);
    for (char c : e.timestamp)
        sum += uint8_t(c);
    for (char c : e.name)
        sum += uint8_t(c);
    CHECK(e.code != nullptr && e.transport != nullptr && sum != SIZE_MAX);
    CHECK(uint8_t(e.kind) <= uint8_t(mcp::AuditKind::Prompt) &&
          uint8_t(e.outcome) <= uint8_t(mcp::AuditOutcome::Error));
    CHECK((e.outcome == mcp::AuditOutcome::Allow) == (e.code[0] == '\0'));
    CHECK(!e.principal || (g_keys && g_keys->by_id(e.principal->id) == e.principal));
    if (e.outcome == mcp::AuditOutcome::Deny)
        return;
    // Admitted: allowlisted, and the caller holds every scope.
    uint32_t held = e.principal ? e.principal->scopes : 0;
    if (e.kind == mcp::AuditKind::Tool) {
        const mcp::Tool* tool = find_named(kTools, e.name, &mcp::Tool::name);
        CHECK(tool && listed(kAllow, e.name) && (held & tool->scopes) == tool->scopes);
        ++g_allowed_runs;
    } else if (e.kind == mcp::AuditKind::Resource) {
        // A resource, or the template (read through, or named by a completion).
        const mcp::Resource* res = find_named(kResources, e.name, &mcp::Resource::uri);
        bool templated = e.name.substr(0, 16) == "test://template/";
        CHECK((res && listed(kResourceAllow, e.name) && (held & res->scopes) == res->scopes) ||
              (templated && (held & mcp::kConformanceFixtures)));
        ++g_allowed_reads;
    } else if (e.kind == mcp::AuditKind::Prompt) {
        bool known = false;
        for (const auto& p : mcp::fixtures::prompts())
            known = known || (e.name == p.name && (held & p.scopes) == p.scopes);
        CHECK(known && listed(kPromptAllow, e.name));
    } else {
        fuzz_check_failed("dispatcher_fuzz", "an authentication event that is not a denial", __LINE__);
    }
}

// A client's response handed to the host: the id as written (a string's body or an integer),
// and the result or error member's own JSON text.
json::Node g_response_nodes[4096];
void on_client_response(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error, uint32_t) {
    CHECK(!raw_id.empty() || id_is_string);
    if (!id_is_string)
        for (char c : raw_id)
            CHECK((c >= '0' && c <= '9') || c == '-');
    auto doc = json::Document::parse(body, g_response_nodes);
    CHECK(doc.ok() && (!is_error || doc->root().valid()));
}

uint64_t g_now = 0;
uint64_t now_ns() { return g_now; }
void fixed_time(char* out, size_t cap) { snprintf(out, cap, "2026-11-22T08:00:00Z"); }

constexpr mcp::LimitConfig kLimits { 4, 2, 3 };

struct World {
    World() {
        config.version = "0.1.0";
        config.tools = kTools;
        config.allowlist = kAllow;
        config.resources = kResources;
        config.resource_allowlist = kResourceAllow;
        config.keys = &keys;
        hooks.now_rfc3339_fn = fixed_time;
        hooks.now_ns_fn = now_ns;
        config.source_commit = "abc1234";
        hooks.audit_fn = on_audit;
        config.instructions = "fuzzing";
        config.resource_templates = mcp::fixtures::resource_templates();
        config.prompts = mcp::fixtures::prompts();
        config.prompt_allowlist = kPromptAllow;
        config.subscriptions = true;
        hooks.client_response = on_client_response;
        if (!keys.add("op", mcp::Role::Operator, "operator-secret-key-1").ok() ||
            !keys.add("root", mcp::Role::Admin, "admin-secret-key-000001").ok() ||
            !keys.add("ro", mcp::Role::Reader, "reader-secret-key-0001").ok())
            abort();
        line_principal = *keys.authenticate("operator-secret-key-1");
        g_keys = &keys;
    }
    mcp::ServerConfig config;
    mcp::CallbackHost hooks;
    mcp::KeyStore keys;
    mcp::CallLimiter limiter { kLimits };
    mcp::Server server { config, limiter, hooks };
    const mcp::Principal* line_principal = nullptr;
};

World& world() {
    static World* w = new World; // never destroyed: LeakSanitizer-safe, no exit-time order
    return *w;
}

// Exactly sized heap buffers, so ASan reports any write past the end.
struct Buffers {
    std::vector<char> big = std::vector<char>(192 * 1024); // the kernel's reply buffer
    std::vector<char> small[4] = { std::vector<char>(48), std::vector<char>(256), std::vector<char>(900),
                                   std::vector<char>(4096) };
};
Buffers& buffers() {
    static Buffers* b = new Buffers;
    return *b;
}

// --- reply checks --------------------------------------------------------------------------

// What JSON-RPC 2.0 (sections 4 and 5) says about a message, decided independently of the server.
struct Expectation {
    bool reply = false;  // a reply is due
    bool has_id = false; // ... echoing this id (otherwise null)
    bool string_id = false;
    int64_t int_id = 0;
    std::vector<char> id_text;
};

json::Node g_nodes[4096]; // the server's arena size: the same messages fit

Expectation expect(std::string_view message) {
    Expectation e;
    auto doc = json::Document::parse(message, g_nodes);
    if (!doc) {
        e.reply = true; // -32700 with a null id
        return e;
    }
    json::Value root = doc->root(), id = root.find("id"), method = root.find("method");
    bool id_ok = !id.valid() || id.is_string() || id.as_int64();
    if (id_ok && id.valid()) {
        e.has_id = true;
        e.string_id = id.is_string();
        if (e.string_id) {
            e.id_text.resize(id.raw().size());
            auto n = id.string_into({ e.id_text.data(), e.id_text.size() });
            CHECK(n.ok());
            e.id_text.resize(*n);
        } else {
            e.int_id = *id.as_int64();
        }
    }
    bool valid = root.is_object() && root.find("jsonrpc").string_equals("2.0") && id_ok &&
                 (!method.valid() || method.is_string());
    // Responses (section 5: result or error, any id, null included) are never answered; invalid
    // requests are; valid ones only when they carry both a method and an id.
    bool response = root.is_object() && root.find("jsonrpc").string_equals("2.0") && !method.valid() &&
                    (root.find("result").valid() || root.find("error").valid());
    e.reply = !response && (!valid || (method.valid() && id.valid()));
    return e;
}

void check_envelope(const json::Value& env) {
    CHECK(env.is_object());
    CHECK(env.find("ok").as_bool() == false);
    json::Value error = env.find("error");
    CHECK(error.find("code").is_string() && error.find("message").is_string());
    json::Value details = error.find("details");
    CHECK(details.is_null() || details.is_object());
    CHECK(env.find("request_id").is_string() && env.find("timestamp").string_equals("2026-11-22T08:00:00Z"));
}

// The parsed reply must look like a JSON-RPC 2.0 response carrying the expected id.
void check_reply(std::string_view reply, const Expectation* want) {
    // Values are comma- or colon-separated, so a reply of n bytes has at most n / 2 + 1 of them.
    static json::Node* arena = new json::Node[192 * 1024 / 2 + 2];
    CHECK(reply.size() <= 192 * 1024);
    json::ParseError err;
    auto doc = json::Document::parse(reply, { arena, reply.size() / 2 + 2 }, {}, &err);
    if (!doc)
        fprintf(stderr, "dispatcher_fuzz: reply is not JSON (%s at %zu): %.*s\n", json::reason_name(err.reason),
                err.offset, int(reply.size()), reply.data());
    CHECK(doc.ok());
    json::Value root = doc->root();
    CHECK(root.is_object() && root.find("jsonrpc").string_equals("2.0"));
    json::Value result = root.find("result"), error = root.find("error"), id = root.find("id");
    CHECK(result.valid() != error.valid());
    CHECK(id.is_null() || id.is_string() || id.as_int64());
    if (want) {
        if (!want->has_id)
            CHECK(id.is_null());
        else if (want->string_id)
            CHECK(id.string_equals({ want->id_text.data(), want->id_text.size() }));
        else
            CHECK(id.as_int64() == want->int_id);
    }
    if (error.valid()) {
        CHECK(error.find("code").as_int64() && error.find("message").is_string());
        check_envelope(error.find("data"));
    } else if (result.find("isError").as_bool() == true) {
        // A failure is never structuredContent (that must conform to the tool's outputSchema).
        CHECK(!result.find("structuredContent").valid());
        check_envelope(result.find("_meta").find("io.basalt/error"));
    }
}

// DISPATCHER_FUZZ_TRACE=1 prints every message and reply (for reproducing a crash input).
bool tracing() {
    static const bool on = getenv("DISPATCHER_FUZZ_TRACE") != nullptr;
    return on;
}

// Handles one message into `out` and checks what the policy and the reply look like.
size_t handle_checked(std::string_view message, mcp::Session& session, std::span<char> out) {
    World& w = world();
    g_tool_runs = g_allowed_runs = g_resource_reads = g_allowed_reads = 0;
    size_t n = w.server.handle(message, session, out);
    if (tracing())
        fprintf(stderr, "> %.*s\n< [%zu/%zu] %.*s\n", int(message.size()), message.data(), n, out.size(),
                int(n <= out.size() ? n : 0), out.data());
    CHECK(n <= out.size());
    // Every run was admitted and audited, and nothing else ran (a subscription or a completion is
    // admitted without a read).
    CHECK(g_tool_runs == g_allowed_runs && g_resource_reads <= g_allowed_reads);
    if (n > 0)
        check_reply({ out.data(), n }, nullptr);
    return n;
}

void one_message(std::string_view message) {
    World& w = world();
    Buffers& b = buffers();
    Expectation want = expect(message);
    mcp::Session start;
    start.principal = w.line_principal;

    mcp::Session s1 = start;
    w.limiter = mcp::CallLimiter(kLimits);
    g_now = 1000000000;
    size_t n = handle_checked(message, s1, b.big);
    CHECK((n > 0) == want.reply);
    if (n > 0)
        check_reply({ b.big.data(), n }, &want);

    // Same state, a small buffer: the same bytes if they fit, else a fallback or nothing.
    std::vector<char>& small = b.small[message.size() % 4];
    mcp::Session s2 = start;
    w.limiter = mcp::CallLimiter(kLimits);
    g_now = 1000000000;
    size_t m = handle_checked(message, s2, small);
    if (n <= small.size())
        CHECK(m == n && memcmp(small.data(), b.big.data(), n) == 0);
    else if (m > 0)
        check_reply({ small.data(), m }, want.reply ? &want : nullptr);
}

void check_notification(std::string_view text, const char* method) {
    std::vector<json::Node> nodes(text.size() + 1);
    auto doc = json::Document::parse(text, nodes);
    CHECK(doc.ok() && doc->root().find("method").string_equals(method));
    CHECK(!doc->root().find("id").valid());
}

void line_sequence(std::string_view input) {
    World& w = world();
    Buffers& b = buffers();
    w.limiter = mcp::CallLimiter(kLimits);
    g_now = 1000000000;
    mcp::Session session;          // anonymous until an initialize presents a key
    static char line_buffer[1024]; // short, so overlong lines are reported too
    mcp::LineFramer framer({ line_buffer, sizeof line_buffer });
    int handled = 0;
    auto on_event = [&](const mcp::FrameEvent& e) {
        if (handled++ >= 64)
            return;
        g_now += 150000000; // 150 ms between messages: the rate limit refills sometimes
        if (e.kind == mcp::FrameEvent::Overflow) {
            size_t n = w.server.oversized(e.discarded, b.big);
            CHECK(n > 0 && n <= b.big.size());
            check_reply({ b.big.data(), n }, nullptr);
            return;
        }
        Expectation want = expect(e.line);
        size_t n = handle_checked(e.line, session, b.big);
        CHECK((n > 0) == want.reply);
        if (n > 0)
            check_reply({ b.big.data(), n }, &want);
        // A log record with the line as its text, at a level taken from the line.
        auto level = static_cast<mcp::LogLevel>(uint8_t(e.line[0]) % 8);
        // And whatever the session's subscriptions are owed now.
        for (size_t i = 0; i <= mcp::Session::kMaxSubscriptions; ++i) {
            size_t u = w.server.next_resource_update(session, b.small[2]);
            CHECK(u <= b.small[2].size() && (u == 0 || i < mcp::Session::kMaxSubscriptions));
            if (u == 0)
                break;
            check_notification({ b.small[2].data(), u }, "notifications/resources/updated");
        }
        size_t k = w.server.log_message(session, level, "fuzz", e.line, b.small[3]);
        CHECK(k <= b.small[3].size());
        if (k > 0)
            check_notification({ b.small[3].data(), k }, "notifications/message");
    };
    framer.feed({ reinterpret_cast<const uint8_t*>(input.data()), input.size() }, on_event);
    framer.feed({ reinterpret_cast<const uint8_t*>("\n"), 1 }, on_event); // the last line, unterminated
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    one_message(input);
    if (input.find('\n') != std::string_view::npos)
        line_sequence(input);
    return 0;
}

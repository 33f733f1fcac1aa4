#pragma once
// Shared by the dispatcher's host tests: an audit hook that keeps every event, a fixed clock,
// and a parsed reply with accessors for the envelope.
#include <json/json.h>
#include <mcp/server/server.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

std::vector<mcp::AuditEvent> g_events;
std::vector<std::string> g_event_names; // the events' names outlive the requests they point into
[[maybe_unused]] void record_event(const mcp::AuditEvent& e) {
    g_events.push_back(e);
    g_event_names.emplace_back(e.name);
}

void fixed_time(char* out, size_t cap) { snprintf(out, cap, "2026-11-22T08:00:00Z"); }
uint64_t g_now = 1000000000;
uint64_t now_ns() { return g_now; }

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

    json::Value result() const { return root.find("result"); }
    // The envelope's error.code and details.reason of a JSON-RPC error ("" when absent).
    std::string error_code() const { return plain(root.find("error").find("data").find("error").find("code")); }
    std::string reason() const {
        return plain(root.find("error").find("data").find("error").find("details").find("reason"));
    }
    // The envelope of a failed tool call: isError, the envelope under _meta["io.basalt/error"] and
    // no structuredContent (which must conform to the tool's outputSchema, a success shape).
    json::Value tool_error() const {
        EXPECT_EQ(result().find("isError").as_bool(), true) << text;
        EXPECT_FALSE(result().find("structuredContent").valid()) << "an error is not the tool's output: " << text;
        return result().find("_meta").find("io.basalt/error");
    }
    static std::string plain(const json::Value& v) { return std::string(v.plain_string().value_or("")); }
};

} // namespace

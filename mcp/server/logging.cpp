// Logging (MCP "Logging"): logging/setLevel, and notifications/message for the session's log
// records and for what a running call logs itself.
#include "server.h"

#include "dispatch.h"

namespace mcp {

static constexpr const char* kLevelNames[] = { "debug", "info",     "notice", "warning",
                                               "error", "critical", "alert",  "emergency" };

const char* log_level_name(LogLevel level) {
    auto i = static_cast<size_t>(level);
    return i < sizeof kLevelNames / sizeof kLevelNames[0] ? kLevelNames[i] : "?";
}

// A level named in a request (logging/setLevel, or 2026-07-28's per-request logLevel).
std::optional<LogLevel> parse_log_level(const json::Value& name) {
    for (size_t i = 0; i < sizeof kLevelNames / sizeof kLevelNames[0]; ++i)
        if (name.string_equals(kLevelNames[i]))
            return static_cast<LogLevel>(i);
    return std::nullopt;
}

// notifications/message (MCP "Logging").
static size_t log_note(LogLevel level, std::string_view logger, std::string_view text, std::span<char> out) {
    json::Writer w(out);
    w.begin_object().key("jsonrpc").string("2.0").key("method").string("notifications/message");
    w.key("params").begin_object().key("level").string(log_level_name(level)).key("logger").string(logger);
    w.key("data").string(text).end_object().end_object();
    return w.complete() ? w.size() : 0;
}

size_t Server::call_log(const PendingCall& call, LogLevel level, std::string_view text, std::span<char> out) {
    if (call.notify_level < 0 || static_cast<int>(level) < call.notify_level)
        return 0;
    return log_note(level, call.tool, text, out);
}

void Server::set_log_level(Request& r, Session& s) {
    if (auto level = parse_log_level(r.params.find("level"))) {
        s.logging = true;
        s.log_level = *level;
        begin_reply(r.w, r.id);
        r.w.key("result").begin_object().end_object().end_object();
        return;
    }
    error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, "unknown log level",
                r.request_id, r.timestamp, { { "reason", "invalid_level" } });
}

size_t Server::log_message(const Session& session, LogLevel level, std::string_view logger, std::string_view text,
                           std::span<char> out) {
    if (!session.logging || level < session.log_level)
        return 0;
    return log_note(level, logger, text, out);
}
} // namespace mcp

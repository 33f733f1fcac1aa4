// The answers and notifications of a tools/call the host runs (start_call): its result, its
// InputRequiredResult (2026-07-28 input rounds), progress, and the requests it sends the client.
#include "server.h"

#include "dispatch.h"
#include "envelope.h"
#include "tool_result.h"

namespace mcp {

bool Server::audit_call(const PendingCall& call, AuditOutcome outcome, const char* code, const char* reason,
                        const char* timestamp) {
    if (!m_host.audits())
        return true;
    char now[32] = "unknown";
    if (!timestamp)
        m_host.now_rfc3339(now, sizeof now);
    uint64_t t = m_host.now_ns();
    AuditEvent e { call.request_id,
                   timestamp ? timestamp : now,
                   call.principal,
                   call.transport ? call.transport : m_config.transport,
                   AuditKind::Tool,
                   call.tool,
                   outcome,
                   code,
                   call.token_id,
                   call.args_hash,
                   t > call.start_ns ? (t - call.start_ns) / 1000 : 0,
                   call.provenance_id,
                   call.action,
                   call.target,
                   reason ? reason : "",
                   call.start_ns };
    return m_host.audit(e);
}

size_t Server::finish_call(const PendingCall& call, bool ok, std::string_view structured, const ToolError& err,
                           bool cancelled, std::span<char> out) {
    if (cancelled) {
        m_limiter.release(call.principal ? call.principal->id : 0);
        audit_call(call, AuditOutcome::Error, "cancelled");
        return 0;
    }
    return answer_call(call, close_call(call, ok, structured, err), structured, out);
}

Server::Closed Server::close_call(const PendingCall& call, bool ok, std::string_view structured, const ToolError& err) {
    Closed c { ok, true, err, "unknown" };
    if (ok && (!json::valid_utf8(structured) || !well_shaped(call.result, structured))) {
        c.ok = false;
        c.err = { ErrorCode::InternalError, "malformed tool output" };
    }
    // The time as text only where it is written: a result carries none, a failure's envelope
    // does, and the audit record takes the same text then (it makes its own otherwise).
    if (!c.ok)
        m_host.now_rfc3339(c.now, sizeof c.now);
    const uint64_t auditing = m_host.now_ns();
    c.durable = audit_call(call, c.ok ? AuditOutcome::Allow : AuditOutcome::Error,
                           c.ok ? "" : error_code_name(c.err.code), c.ok ? nullptr : c.err.reason,
                           c.ok ? nullptr : c.now);
    m_stages.add_since(CallStages::Audit, auditing, m_host.now_ns());
    return c;
}

size_t Server::answer_call(const PendingCall& call, const Closed& closed, std::string_view structured,
                           std::span<char> out) {
    m_limiter.release(call.principal ? call.principal->id : 0);
    const uint64_t encoding = m_host.now_ns();
    auto begin = [&](json::Writer& wr) { begin_call_reply(wr, call); };
    auto fail = [&](const ToolError& e) {
        char now[32] = "unknown";
        m_host.now_rfc3339(now, sizeof now);
        json::Writer failed(out);
        write_tool_result(failed, begin, call.modern, call.result, false, {}, e, call.request_id, now);
        return failed.complete() ? failed.size() : 0;
    };
    if (closed.ok && !closed.durable) {
        // The tool did its work, but the disk failed before the change was durable: the client
        // must not be told it is stored (it may be gone after a restart).
        return fail({ ErrorCode::InternalError,
                      "the disk failed before this change was durable: it may not be stored; durable collections "
                      "are read-only until a restart (see kernel://status)",
                      "storage_failed" });
    }
    json::Writer w(out);
    write_tool_result(w, begin, call.modern, call.result, closed.ok, structured, closed.err, call.request_id,
                      closed.now);
    m_stages.add_since(CallStages::Encode, encoding, m_host.now_ns());
    if (!w.complete())
        return fail({ ErrorCode::LimitOutputExceeded, "reply too large for the line" });
    return w.size();
}

size_t Server::input_required(const PendingCall& call, std::string_view requests, std::string_view used, bool used_fits,
                              std::span<char> out) {
    m_limiter.release(call.principal ? call.principal->id : 0);
    json::Writer w(out);
    auto begin = [&](json::Writer& wr) { begin_call_reply(wr, call); };
    const StateBinding b { "tools/call", call.tool, call.args_hash, call.principal ? call.principal->id : uint16_t(0) };
    if (used_fits &&
        write_input_required(w, begin, m_config.state_key, b, m_host.now_ns(), requests, used, m_state_text) &&
        w.complete()) {
        audit_call(call, AuditOutcome::Allow, "input_required");
        return w.size();
    }
    char now[32] = "unknown";
    m_host.now_rfc3339(now, sizeof now);
    json::Writer fallback(out);
    ToolError e { ErrorCode::LimitOutputExceeded,
                  "the input this call needs, or has been given, is too large to carry to another round",
                  "input_too_large" };
    write_tool_result(fallback, begin, true, call.result, false, {}, e, call.request_id, now);
    audit_call(call, AuditOutcome::Error, error_code_name(e.code));
    return fallback.complete() ? fallback.size() : 0;
}

size_t Server::client_request(std::string_view id, std::string_view method, std::string_view params,
                              std::span<char> out) {
    if (params.empty() || params[0] != '{' || !json::valid_utf8(params))
        return 0;
    json::Writer w(out);
    w.begin_object().key("jsonrpc").string("2.0").key("id").string(id).key("method").string(method);
    w.key("params").raw(params).end_object();
    return w.complete() ? w.size() : 0;
}

size_t Server::progress(const PendingCall& call, uint64_t done, uint64_t total, std::string_view message,
                        std::span<char> out) {
    if (!call.has_progress)
        return 0;
    json::Writer w(out);
    w.begin_object().key("jsonrpc").string("2.0").key("method").string("notifications/progress");
    w.key("params").begin_object().key("progressToken");
    if (call.progress_is_string)
        w.raw_string({ call.progress_token, call.progress_len });
    else
        w.raw({ call.progress_token, call.progress_len });
    w.key("progress").number(done);
    if (total)
        w.key("total").number(total);
    if (!message.empty())
        w.key("message").string(message);
    w.end_object().end_object();
    return w.complete() ? w.size() : 0;
}
} // namespace mcp

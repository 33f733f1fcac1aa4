// Tools (MCP "Tools"): tools/list, and tools/call through the pipeline to an inline run or a
// call handed to the host (start_call), with a 2026-07-28 call's input-round checks.
#include "server.h"

#include "dispatch.h"
#include "envelope.h"
#include "client_request.h"
#include "tool_result.h"

#include <ktl/format.h>

namespace mcp {
namespace {
// 2026-07-28: a client capability the request needs but did not declare.
constexpr int kMissingCapability = -32021;
} // namespace

// Calls run inline (Tool::run) unless the host says it runs them.
bool Host::start(const Tool&, const json::Value&, const PendingCall&, ToolError& err) {
    err = { ErrorCode::InternalError, "the host runs no calls" };
    return false;
}

bool Server::allowed(std::string_view tool) const {
    for (auto name : m_config.allowlist)
        if (name == tool)
            return true;
    return false;
}

const Tool* Server::allowed_tool(std::string_view name) const { return allowed(name) ? find_tool(name) : nullptr; }

const Tool* Server::find_tool(std::string_view name) const {
    for (const auto& t : m_config.tools)
        if (name == t.name)
            return &t;
    return nullptr;
}

void Server::tools_list(Request& r) {
    uint32_t offset = 0;
    if (!begin_list(r, offset))
        return;
    // Only allowlisted tools are listed: deny by default applies to discovery too.
    json::Writer& w = r.w;
    auto listed = [this](const Tool& t) { return allowed(t.name); };
    write_page(w, "tools", m_config.tools, offset, m_config.page_size, listed, [&w](const Tool& t) {
        w.begin_object()
            .key("name")
            .string(t.name)
            .key("title")
            .string(t.title)
            .key("description")
            .string(t.description);
        w.key("inputSchema").raw(t.input_schema);
        if (t.output_schema)
            w.key("outputSchema").raw(t.output_schema);
        w.end_object();
    });
    w.end_object().end_object();
}

// What a call acts on, for the audit trail: the value of its target argument and how many ids it
// names ("docs, 3 ids"). Written before validation, so only what has the expected shape is used.
static void describe_target(const Tool& tool, const json::Value& args, char (&out)[64]) {
    out[0] = '\0';
    if (!tool.target_key)
        return;
    auto target = args.find(tool.target_key).plain_string();
    if (!target)
        return;
    size_t n = copy_text(out, *target);
    json::Value ids = args.find("ids");
    if (!ids.is_array())
        return;
    ktl::Formatter(out + n, sizeof out - n).append(", %u ids", static_cast<unsigned>(ids.size()));
}

void Server::tools_call(Request& r, Session& s) {
    json::Value arguments;
    if (!named_request(r, AuditKind::Tool, "tools/call needs a name and an arguments object", arguments))
        return;
    std::string_view tool_name = r.name;
    const Tool* tool = allowed_tool(tool_name);
    if (!tool) {
        refuse_unknown(r, kInvalidParams, "Unknown tool", "no such tool, or it is not on the allowlist",
                       { "tool", tool_name });
        return;
    }
    r.action = tool->action ? tool->action : "call";
    describe_target(*tool, arguments, r.target);
    lap(r, CallStages::Route);
    if (!authorise(r, tool->scopes))
        return;
    lap(r, CallStages::Authorise);
    if (!validate(r, s, *tool, arguments))
        return;
    if (r.modern && !declared_needs(r, s, *tool))
        return;
    std::string_view answers, carried;
    if (r.modern &&
        !gather_input(r,
                      { "tools/call", bound_name(tool_name), r.args_hash, r.principal ? r.principal->id : uint16_t(0) },
                      answers, carried))
        return;
    lap(r, CallStages::Validate);
    uint16_t who = r.principal ? r.principal->id : 0;
    if (!admit(r))
        return;
    lap(r, CallStages::Admit);
    if (m_host.runs_calls()) {
        start_pending(r, s, *tool, arguments, answers, carried);
        return;
    }
    if (!tool->run) {
        m_limiter.release(who);
        error_reply(r.w, r.id, kInvalidRequest, "Internal error", ErrorCode::InternalError, "the tool has no runner",
                    r.request_id, r.timestamp);
        return;
    }
    // The tool writes its structured result into a separate, bounded buffer (output limit).
    json::Writer sw(m_scratch);
    ToolError err;
    bool ok = tool->run(arguments, sw, err);
    m_limiter.release(who);
    lap(r, CallStages::Body);
    if (ok && (!sw.complete() || !well_shaped(tool->result, sw.view()))) {
        ok = false;
        err = sw.error() == ktl::Error::Full ? ToolError { ErrorCode::LimitOutputExceeded, "output over 65,536 bytes" }
                                             : ToolError { ErrorCode::InternalError, "malformed tool output" };
    }
    write_tool_result(
        r.w, [&](json::Writer& w) { begin_reply(w, r.id); }, r.modern, tool->result, ok, sw.view(), err, r.request_id,
        r.timestamp);
    lap(r, CallStages::Encode);
    r.reason = ok ? "" : err.reason;
    audit(r, ok ? AuditOutcome::Allow : AuditOutcome::Error, ok ? "" : error_code_name(err.code));
    lap(r, CallStages::Audit); // the transport's send and the whole call are the host's to time
}

void Server::start_pending(Request& r, const Session& s, const Tool& tool, const json::Value& arguments,
                           std::string_view answers, std::string_view carried) {
    PendingCall call;
    std::string_view id = r.id.raw();
    uint16_t who = r.principal ? r.principal->id : 0;
    json::Value token = r.params.find("_meta").find("progressToken");
    bool token_ok = !token.valid() || token.is_string() || token.as_int64();
    if (id.size() >= sizeof call.id || token.raw().size() >= sizeof call.progress_token || !token_ok) {
        m_limiter.release(who);
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                    "request id or progress token too long", r.request_id, r.timestamp,
                    { { "reason", "id_too_long" } });
        audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
        return;
    }
    call.id_len = copy_text(call.id, id);
    call.id_is_string = r.id.is_string();
    copy_text(call.request_id, r.request_id);
    if (token.valid()) {
        call.has_progress = true;
        call.progress_len = copy_text(call.progress_token, token.raw());
        call.progress_is_string = token.is_string();
    }
    call.principal = r.principal;
    copy_text(call.tool, r.name);
    call.args_hash = r.args_hash;
    call.start_ns = r.start_ns;
    call.received_ns = r.received_ns;
    call.modern = r.modern;
    call.log_level = r.log_level;
    call.origin = r.origin;
    call.reply_to = r.reply_to;
    call.transport = r.transport;
    call.notify_level = r.modern ? r.log_level : s.logging ? static_cast<int8_t>(s.log_level) : int8_t(-1);
    call.result = tool.result;
    // What the call may ask the client: per request in 2026-07-28, else what the session declared.
    call.client_caps = r.modern ? declared_capabilities(r.params) : s.client_caps;
    if (!s.client_replies && !r.modern)
        call.client_caps = 0; // 2026-07-28 asks in its result, which needs no way back
    call.answers = answers;
    call.carried = carried;
    call.provenance_id = r.provenance;
    call.action = r.action;
    copy_text(call.target, r.target);
    ToolError err;
    if (!m_host.start(tool, arguments, call, err)) {
        m_limiter.release(who);
        write_tool_result(
            r.w, [&](json::Writer& w) { begin_reply(w, r.id); }, r.modern, tool.result, false, {}, err, r.request_id,
            r.timestamp);
        r.reason = err.reason;
        audit(r, AuditOutcome::Error, error_code_name(err.code));
        return;
    }
    lap(r, CallStages::Start);
    r.deferred = true;
}

// 2026-07-28 "Client Capabilities": a server must not rely on a capability the client did not
// declare, so a tool that cannot work without asking the client is refused up front
// (MissingRequiredClientCapabilityError), its data naming what is missing as a capabilities
// object ({"sampling":{}}).
bool Server::declared_needs(Request& r, Session& s, const Tool& tool) {
    uint8_t declared = declared_capabilities(r.params);
    uint8_t missing = static_cast<uint8_t>(tool.client_needs & ~declared);
    if (!missing)
        return true;
    s.reply_kind = ReplyKind::BadRequest;
    json::Writer& w = r.w;
    begin_reply(w, r.id);
    w.key("error").begin_object().key("code").number(int64_t(kMissingCapability));
    w.key("message").string("Missing required client capability").key("data").begin_object();
    write_envelope_members(w, ErrorCode::ValidationFailed,
                           "this tool asks the client for input the request did not declare it can give", r.request_id,
                           r.timestamp, { { "reason", "missing_client_capability" } });
    w.key("requiredCapabilities").begin_object();
    for (auto bit : { kClientSampling, kClientElicitation, kClientRoots })
        if (missing & bit)
            w.key(capability_name(bit)).begin_object().end_object();
    w.end_object().end_object().end_object().end_object();
    audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
    return false;
}

// 2026-07-28 tools/call and prompts/get (SEP-2322): the client's input for a body that asked.
// inputResponses must be an object of response objects (anything else is a protocol error, never
// a silent "no answer"), and a requestState must open under the kernel's key for exactly this
// request and principal. fresh: the inputResponses object's text; carried: the members of the
// answers the state carried (in m_state_payload); either empty when there are none.
bool Server::gather_input(Request& r, const StateBinding& binding, std::string_view& fresh, std::string_view& carried) {
    fresh = carried = {};
    json::Value responses = r.params.find("inputResponses");
    json::Value state = r.params.find("requestState");
    auto refuse = [&](const char* message, const char* reason) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, message, r.request_id,
                    r.timestamp, { { "reason", reason } });
        audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
        return false;
    };
    if (responses.valid() && !responses.is_object())
        return refuse("inputResponses must be an object of responses keyed as the inputRequests were",
                      "invalid_input_responses");
    for (json::Value v = responses.first(); v.valid(); v = v.next_sibling())
        if (!v.is_object())
            return refuse(
                "each input response must be an object (an ElicitResult, CreateMessageResult or ListRootsResult)",
                "invalid_input_responses");
    if (responses.valid() && responses.raw().size() > InputRound::kMaxAnswers)
        return refuse("the input responses are over 16 KiB", "input_too_large");
    if (state.valid()) {
        // The state's text is dead once opened: what it carried is in m_state_payload.
        auto n = state.is_string() ? state.string_into({ m_state_text, sizeof m_state_text })
                                   : ktl::Result<size_t>(ktl::Error::Corrupt);
        StateCheck check = n ? open_state(m_config.state_key, binding, m_host.now_ns(), { m_state_text, *n },
                                          m_state_payload, carried)
                             : StateCheck::Malformed;
        if (check != StateCheck::Ok) {
            char reason[40];
            ktl::Formatter f(reason, sizeof reason);
            f.append("request_state_%s", state_check_name(check));
            return refuse("requestState failed verification: send back exactly the state of this request's last "
                          "InputRequiredResult, within 10 minutes",
                          reason);
        }
    }
    if (responses.valid())
        fresh = responses.raw();
    return true;
}

// The name a requestState binds: as much of it as a PendingCall keeps, so that the state a
// deferred call seals opens for the request that sends it back.
std::string_view Server::bound_name(std::string_view name) { return name.substr(0, sizeof(PendingCall::tool) - 1); }
} // namespace mcp

// The request pipeline (docs/security.md), its steps in the order a request meets them:
//   authenticate  the line's principal or a presented key (the router, for every request)
//   provenance    a node for tools/call, resources/read and prompts/get (the router; an anonymous
//                 request's once the limiter admits it)
//   route         deny by default: an unknown or unlisted name never reaches a handler
//   authorise     the caller's scopes
//   validate      tools/call: the arguments against the tool's input schema
//   admit         the caller's rate and concurrency
//   audit         every decision, whatever its outcome
// The methods call the steps after provenance: tools/call (tools.cpp) in this order, its slot held
// until the call ends; resources/read and prompts/get (resources.cpp, prompts.cpp) are admitted
// before they are routed (the slot given back at once: admit_inline), so an unknown name costs
// the caller's rate like any other.
#include "server.h"

#include "dispatch.h"
#include "envelope.h"
#include "client_request.h"
#include "tool_result.h"

#include <crypto/sha256.h>
#include <ktl/format.h>
#include <mcp/policy/roles.h>
#include <mcp/schema/compiled.h>
#include <mcp/schema/validator.h>

namespace mcp {

const char* audit_kind_name(AuditKind kind) {
    switch (kind) {
    case AuditKind::Tool: return "tool";
    case AuditKind::Resource: return "resource";
    case AuditKind::Auth: return "auth";
    case AuditKind::Prompt: return "prompt";
    case AuditKind::Peer: return "peer";
    }
    return "?";
}

const char* audit_outcome_name(AuditOutcome outcome) {
    switch (outcome) {
    case AuditOutcome::Allow: return "allow";
    case AuditOutcome::Deny: return "deny";
    case AuditOutcome::Error: return "error";
    }
    return "?";
}

// The line's principal, unless the request presents a key in params._meta (MCP "_meta" keys may
// carry a reverse-DNS prefix). On a line, a key presented with initialize becomes the session's
// principal; over HTTP (key_per_request) every request carries its own. Asked once per request,
// by handle(), before any method is dispatched: handlers find r.principal set.
bool Server::authenticate(Request& r, Session& s) {
    r.principal = s.principal;
    json::Value key = r.params.find("_meta").find(kApiKeyMeta);
    if (!key.valid() && s.api_key.empty())
        return true;
    auto text = key.valid() ? key.plain_string() : std::optional<std::string_view>(s.api_key);
    // The transport's key arrives hashed already (its session check needed the digest): one hash
    // per request serves the session check, the gate and the key store.
    const crypto::Digest* digest = key.valid() ? nullptr : s.api_key_digest;
    const uint64_t now = m_host.now_ns();
    // Fingerprinted only where a gate keeps them (a hash per request otherwise for nothing).
    const uint64_t fp = !m_config.gate ? 0
                        : digest       ? AuthGate::fingerprint(*digest)
                                       : AuthGate::fingerprint(text.value_or(key.raw()));
    // Before any key is checked: a source that keeps presenting bad keys is slowed down.
    if (m_config.gate && !m_config.gate->admit(s.source, fp, now)) {
        r.kind = AuditKind::Auth;
        r.name = "api-key";
        r.action = "authenticate";
        error_reply(r.w, r.id, kLimitError, "Too many requests", ErrorCode::LimitRateExceeded,
                    "too many failed authentications from this source; slow down", r.request_id, r.timestamp,
                    { { "reason", "auth_throttled" } });
        audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::LimitRateExceeded));
        return false;
    }
    const Principal* who = nullptr;
    if (text && m_config.keys) {
        if (auto p = m_config.keys->authenticate(*text, digest))
            who = *p;
    }
    if (m_config.gate) {
        if (who)
            m_config.gate->succeeded(s.source, fp, now);
        else
            m_config.gate->failed(s.source, now);
    }
    if (!who) {
        r.kind = AuditKind::Auth;
        r.name = "api-key";
        r.action = "authenticate";
        error_reply(
            r.w, r.id, kAuthError, "Unauthorized", ErrorCode::AuthInvalidApiKey,
            "the API key matches no principal (check it for typos; ./basalt run --key ROLE:SECRET sets the keys)",
            r.request_id, r.timestamp);
        audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::AuthInvalidApiKey));
        return false;
    }
    r.principal = who;
    return true;
}

// The adapter contract: a node before policy, for every request whose decision is audited.
// Everything in it that the client declared (its name and version) is recorded as declared and
// the node is UNTRUSTED: nothing a client sends vouches for itself. An anonymous request gets its
// node once the limiter admits it (admit()): a flood of them, all refused, cannot push the nodes
// that stored data points to out of the ring; their refusals are audited without one.
void Server::note_provenance(Request& r, const Session& s, const json::Value& method) {
    if (!m_host.keeps_provenance() || !(method.string_equals("tools/call") || method.string_equals("resources/read") ||
                                        method.string_equals("prompts/get")))
        return;
    std::string_view name = method.plain_string().value_or("");
    if (!r.principal) {
        r.node_session = &s;
        r.node_method = name;
        return;
    }
    make_node(r, s, name);
}

void Server::make_node(Request& r, const Session& s, std::string_view method) {
    ProvenanceNode node;
    node.principal = r.principal;
    node.transport = r.transport;
    node.session = s.origin;
    node.request_id = r.request_id;
    node.method = method;
    node.client_name = s.client_name;
    node.client_version = s.client_version;
    char name[sizeof s.client_name], version[sizeof s.client_version];
    json::Value info = r.params.find("_meta").find(kClientInfoMeta);
    if (r.modern && info.is_object()) {
        copy_text(name, info.find("name").plain_string().value_or(""));
        copy_text(version, info.find("version").plain_string().value_or(""));
        node.client_name = name;
        node.client_version = version;
    }
    node.integrity = Integrity::Untrusted;
    r.provenance = m_host.provenance(node);
}

// The start of tools/call and prompts/get: params.name (a plain string) and params.arguments (an
// object, or absent) into r.name, r.kind and r.args_hash (the first 8 bytes of the arguments'
// SHA-256: the audit's hash). False when answered with the error.
bool Server::named_request(Request& r, AuditKind kind, const char* refusal, json::Value& arguments) {
    auto name = r.params.find("name").plain_string();
    arguments = r.params.find("arguments");
    if (!name || (arguments.valid() && !arguments.is_object())) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, refusal, r.request_id,
                    r.timestamp, { { "reason", "invalid_call" } });
        return false;
    }
    r.kind = kind;
    r.name = *name;
    if (arguments.valid()) {
        auto d = crypto::Sha256::hash(arguments.raw());
        for (int i = 0; i < 8; ++i)
            r.args_hash = (r.args_hash << 8) | d[i];
    }
    return true;
}

// Route (deny by default): an unknown or unlisted tool, resource or prompt never reaches a
// handler; the envelope says validation_unknown_tool (envelope.h has the JSON-RPC codes).
// An unknown resource's data also names its URI where SEP-2164 puts it (data.uri), beside the
// envelope's members.
void Server::refuse_unknown(Request& r, int rpc_code, const char* rpc_message, std::string_view message,
                            Detail detail) {
    json::Writer& w = r.w;
    begin_reply(w, r.id);
    w.key("error").begin_object().key("code").number(int64_t(rpc_code)).key("message").string(rpc_message);
    w.key("data").begin_object();
    write_envelope_members(w, ErrorCode::ValidationUnknownTool, message, r.request_id, r.timestamp, { detail });
    if (detail.key == "uri")
        w.key("uri").string(detail.value);
    w.end_object().end_object().end_object();
    audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationUnknownTool));
}

bool Server::authorise(Request& r, uint32_t scopes) {
    uint32_t held = (r.principal ? r.principal->scopes : 0) | m_config.anonymous_scopes;
    if ((held & scopes) == scopes)
        return true;
    char required[96];
    format_scopes(scopes, required, sizeof required);
    ErrorCode code = r.principal ? ErrorCode::AuthInsufficientRole : ErrorCode::AuthMissingApiKey;
    if (!r.principal)
        error_reply(
            r.w, r.id, kAuthError, "Unauthorized", code,
            "this needs an API key: over HTTP 'Authorization: Bearer <key>' or 'X-MCP-API-Key: <key>', on a line params._meta[\"io.basalt/api-key\"]",
            r.request_id, r.timestamp, { { "required", required } });
    else
        error_reply(r.w, r.id, kAuthError, "Forbidden", code, "the caller's role lacks a required scope", r.request_id,
                    r.timestamp, { { "role", role_name(r.principal->role) }, { "required", required } });
    audit(r, AuditOutcome::Deny, error_code_name(code));
    return false;
}

void Server::compile_schemas() {
    for (const Tool& t : m_config.tools)
        if (allowed(t.name))
            compiled_schema(t);
}

const schema::Compiled* Server::compiled_schema(const Tool& tool) {
    const Tool* first = m_config.tools.data();
    if (&tool < first || &tool >= first + m_config.tools.size())
        return nullptr; // not one of this server's tools: nothing to keep it by
    return m_schemas.get(size_t(&tool - first), tool.input_schema);
}

// Validate against the declared schema, compiled once (a tool not compiled at configuration is at
// its first call; one the set has no room for is parsed here each time); a schema we cannot read
// fails closed.
bool Server::validate(Request& r, const Session& s, const Tool& tool, const json::Value& arguments) {
    schema::Failure failure;
    static const char kEmpty[] = "{}";
    json::Document empty_doc;
    json::Node empty_nodes[1];
    json::Value instance = arguments;
    if (!arguments.valid()) {
        auto e = json::Document::parse(kEmpty, empty_nodes);
        empty_doc = *e;
        instance = empty_doc.root();
    }
    bool valid;
    if (const schema::Compiled* compiled = compiled_schema(tool)) {
        valid = compiled->validate(instance, failure);
    } else {
        auto schema_doc = json::Document::parse(tool.input_schema, m_schema_nodes);
        valid = schema_doc && schema::validate(schema_doc->root(), instance, failure);
        if (!schema_doc)
            failure.reason = schema::Reason::SchemaUnsupported;
    }
    if (!valid) {
        refuse_arguments(r, s, r.name, failure); // r.name: the tool's name as requested
        return false;
    }
    return true;
}

// Revisions are dates: from 2025-11-25 on, schema failures are tool execution errors.
static bool tool_errors_for_arguments(std::string_view version) {
    return version.size() == 10 && version >= std::string_view("2025-11-25");
}

// Since 2025-11-25 (SEP-1303) arguments that fail the input schema are a tool execution error,
// so the model reads what was wrong and can correct itself: a result with isError, a sentence and
// the envelope in content, the envelope in _meta. Older revisions get JSON-RPC -32602.
void Server::refuse_arguments(Request& r, const Session& s, std::string_view tool, const schema::Failure& failure) {
    static constexpr const char* kMessage = "the arguments do not match the tool's input schema";
    const char* reason = schema::reason_name(failure.reason);
    const char* keyword = failure.keyword ? failure.keyword : "";
    const std::initializer_list<Detail> details = { { "reason", reason },
                                                    { "path", failure.path },
                                                    { "keyword", keyword } };
    audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
    if (!r.modern && !tool_errors_for_arguments(s.protocol_version)) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, kMessage, r.request_id,
                    r.timestamp, details);
        return;
    }
    char envelope[512]; // bounded: short message, a 64-byte path, fixed names
    json::Writer ew(envelope);
    write_envelope(ew, ErrorCode::ValidationFailed, kMessage, r.request_id, r.timestamp, details);
    char text[1024];
    ktl::Formatter t(text, sizeof text);
    t.append("Invalid arguments for tool '%.*s': %s: %s", int(tool.size()), tool.data(),
             failure.path[0] ? failure.path : "the arguments", failure.message);
    if (keyword[0])
        t.append(" (schema keyword '%s')", keyword);
    t.append(". Correct the arguments and call the tool again.\n%.*s", int(ew.view().size()), ew.view().data());
    begin_reply(r.w, r.id);
    r.w.key("result").begin_object();
    if (r.modern)
        r.w.key("resultType").string("complete");
    write_error_members(r.w, t.c_str(), ew.view());
    r.w.end_object().end_object();
}

bool Server::admit(Request& r) {
    uint16_t who = r.principal ? r.principal->id : 0;
    auto decision = m_limiter.acquire(who, m_host.now_ns(), r.principal ? &r.principal->limits : nullptr,
                                      r.principal ? r.principal->role : Role::Anonymous);
    if (decision.allowed) {
        if (r.node_session && r.provenance == 0)
            make_node(r, *r.node_session, r.node_method);
        return true;
    }
    error_reply(r.w, r.id, kLimitError, "Too many requests", decision.code, "per-caller limit reached", r.request_id,
                r.timestamp);
    audit(r, AuditOutcome::Deny, error_code_name(decision.code));
    return false;
}

bool Server::admit_inline(Request& r) {
    if (!admit(r))
        return false;
    m_limiter.release(r.principal ? r.principal->id : 0); // done within this request
    return true;
}

void Server::lap(Request& r, CallStages::Stage s) {
    if (!r.timed)
        return;
    const uint64_t now = m_host.now_ns();
    m_stages.add_since(s, r.lap_ns, now);
    r.lap_ns = now;
}

void Server::audit(const Request& r, AuditOutcome outcome, const char* code) {
    if (!m_host.audits())
        return;
    uint64_t now = m_host.now_ns();
    AuditEvent e { r.request_id,
                   r.timestamp,
                   r.principal,
                   r.transport,
                   r.kind,
                   r.name,
                   outcome,
                   code,
                   0,
                   r.args_hash,
                   now > r.start_ns ? (now - r.start_ns) / 1000 : 0,
                   r.provenance,
                   r.action,
                   r.target,
                   r.reason ? r.reason : "" };
    m_host.audit(e);
}

// The end of a handler that wrote into a bounded buffer of its own: an incomplete writer is the
// failure (over the 64 KiB limit, or malformed); a failure is answered with `refusal` and
// audited. True when `out` is good to send.
bool Server::output_ready(Request& r, bool ok, const json::Writer& out, ToolError& err, const char* refusal) {
    if (ok && !out.complete()) {
        ok = false;
        err = out.error() == ktl::Error::Full ? ToolError { ErrorCode::LimitOutputExceeded, "output over 65,536 bytes" }
                                              : ToolError { ErrorCode::InternalError, "malformed output" };
    }
    if (!ok) {
        if (err.reason)
            error_reply(r.w, r.id, kInvalidRequest, refusal, err.code, err.message, r.request_id, r.timestamp,
                        { { "reason", err.reason } });
        else
            error_reply(r.w, r.id, kInvalidRequest, refusal, err.code, err.message, r.request_id, r.timestamp);
        audit(r, AuditOutcome::Error, error_code_name(err.code));
    }
    return ok;
}
} // namespace mcp

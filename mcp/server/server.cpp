#include "server.h"

#include "dispatch.h"
#include "envelope.h"
#include "client_request.h"

#include <optional>

#include <crypto/sha256.h>
#include <ktl/format.h>
#include <ktl/utf8.h>
#include <mcp/policy/roles.h>
#include <mcp/schema/validator.h>

namespace mcp {
namespace {

constexpr const char* kVersions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };
// 2026-07-28 protocol errors: HTTP headers that disagree with the body ("Streamable HTTP",
// Request Metadata), a client capability the request needs but did not declare, a revision the
// server does not serve ("Protocol Version Negotiation").
constexpr int kHeaderMismatch = -32020, kMissingCapability = -32021, kUnsupportedVersion = -32022;

// 2026-07-28 per-request metadata keys.
constexpr const char* kLogLevelMeta = "io.modelcontextprotocol/logLevel";
constexpr const char* kServerInfoMeta = "io.modelcontextprotocol/serverInfo";
} // namespace

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

// Cut at a character boundary: what is copied may be shown as JSON text again.
template <size_t N>
static uint8_t copy_text(char (&dst)[N], std::string_view src) {
    static_assert(N <= 256);
    return static_cast<uint8_t>(ktl::utf8_copy(dst, N, src));
}

static constexpr const char* kLevelNames[] = { "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" };

const char* log_level_name(LogLevel level) {
    auto i = static_cast<size_t>(level);
    return i < sizeof kLevelNames / sizeof kLevelNames[0] ? kLevelNames[i] : "?";
}

// A level named in a request (logging/setLevel, or 2026-07-28's per-request logLevel).
static std::optional<LogLevel> parse_log_level(const json::Value& name) {
    for (size_t i = 0; i < sizeof kLevelNames / sizeof kLevelNames[0]; ++i)
        if (name.string_equals(kLevelNames[i]))
            return static_cast<LogLevel>(i);
    return std::nullopt;
}

// Only what is implemented is declared (the same set in both eras); subscriptions only where
// the host delivers their notifications (and the handshake era, which has them).
static void write_capabilities(json::Writer& w, const ServerConfig& c, bool modern) {
    bool resources = !c.resources.empty() || !c.resource_templates.empty();
    bool prompts = !c.prompts.empty() && !c.prompt_allowlist.empty();
    w.key("capabilities").begin_object();
    w.key("tools").begin_object().key("listChanged").boolean(false).end_object();
    if (resources) {
        w.key("resources").begin_object().key("subscribe").boolean(c.subscriptions && !modern);
        w.key("listChanged").boolean(false).end_object();
    }
    if (prompts)
        w.key("prompts").begin_object().key("listChanged").boolean(false).end_object();
    if (prompts || !c.resource_templates.empty())
        w.key("completions").begin_object().end_object();
    w.key("logging").begin_object().end_object();
    w.end_object();
}

void begin_reply(json::Writer& w, const json::Value& id) {
    w.begin_object().key("jsonrpc").string("2.0").key("id");
    if (!id.valid())
        w.null();
    else if (id.is_string())
        w.raw_string(id.raw());
    else
        w.raw(id.raw());
}

// {"jsonrpc":"2.0","id":..,"error":{"code":..,"message":..,"data":<envelope>}}
void error_reply(json::Writer& w, const json::Value& id, int rpc_code, const char* rpc_message, ErrorCode code,
                 std::string_view detail_message, std::string_view request_id, std::string_view timestamp,
                 std::initializer_list<Detail> details) {
    begin_reply(w, id);
    w.key("error").begin_object().key("code").number(int64_t(rpc_code)).key("message").string(rpc_message);
    w.key("data");
    write_envelope(w, code, detail_message, request_id, timestamp, details);
    w.end_object().end_object();
}

size_t Server::oversized(uint64_t, std::span<char> out) {
    json::Writer w(out);
    char now[32] = "unknown";
    if (m_config.now_rfc3339)
        m_config.now_rfc3339(now, sizeof now);
    error_reply(w, json::Value(), kInvalidRequest, "Invalid Request", ErrorCode::ValidationFailed,
                "message longer than the line limit; discarded", "", now, { { "reason", "message_too_long" } });
    return w.complete() ? w.size() : 0;
}

bool Server::serves_version(std::string_view version) {
    for (const char* v : kVersions)
        if (version == v)
            return true;
    return version == kModernVersion;
}

size_t Server::handle(std::string_view message, Session& session, std::span<char> out) {
    json::Writer w(out);
    session.reply_kind = ReplyKind::Normal;
    Request r { w, {}, {}, "", "unknown", nullptr, AuditKind::Tool, {}, 0, 0, false };
    r.origin = session.origin;
    r.reply_to = session.reply_to;
    r.transport = session.transport ? session.transport : m_config.transport;
    if (m_config.now_rfc3339)
        m_config.now_rfc3339(r.timestamp, sizeof r.timestamp);

    json::ParseError perr;
    auto doc = json::Document::parse(message, m_nodes, {}, &perr);
    // A message with more values than the Server's own arena (a batch of vectors as JSON
    // arrays): parsed again in an arena of the size it can need, held until it is answered.
    struct LargeArena {
        const ServerConfig& config;
        json::Node* nodes = nullptr;
        ~LargeArena() {
            if (nodes && config.free_nodes)
                config.free_nodes(nodes);
        }
    } large { m_config };
    if (!doc && perr.reason == json::Reason::ArenaFull && m_config.alloc_nodes) {
        size_t need = json::value_bound(message);
        need = need < kMaxMessageValues ? need : kMaxMessageValues;
        large.nodes = m_config.alloc_nodes(need);
        if (large.nodes)
            doc = json::Document::parse(message, { large.nodes, need }, {}, &perr);
    }
    if (!doc) {
        error_reply(w, {}, kParseError, "Parse error", ErrorCode::ValidationFailed, "the message is not valid JSON", "",
                    r.timestamp, { { "reason", json::reason_name(perr.reason) } });
        return w.complete() ? w.size() : 0;
    }
    json::Value root = doc->root();
    json::Value id = root.find("id");
    json::Value method = root.find("method");
    if (root.is_object() && root.find("jsonrpc").string_equals("2.0") && !method.valid() &&
        (root.find("result").valid() || root.find("error").valid())) {
        // A response (JSON-RPC 2.0 section 5; its id may be null) is never answered: an error
        // reply to a malformed one could start two peers answering each other for ever.
        client_response(root, session);
        return 0;
    }
    bool id_ok = !id.valid() || id.is_string() || id.as_int64().has_value();
    if (!root.is_object() || !root.find("jsonrpc").string_equals("2.0") || !id_ok || (method.valid() && !method.is_string())) {
        error_reply(w, id_ok ? id : json::Value(), kInvalidRequest, "Invalid Request", ErrorCode::ValidationFailed,
                    "not a JSON-RPC 2.0 request", "", r.timestamp, { { "reason", "invalid_request" } });
        return w.complete() ? w.size() : 0;
    }
    if (!method.valid())
        return 0; // neither a request nor a response, but with a usable id: nothing to answer
    r.id = id;
    r.params = root.find("params");
    if (id.valid()) {
        if (id.is_string()) {
            auto n = id.string_into({ r.request_id, sizeof r.request_id - 1 });
            r.request_id[n ? *n : 0] = '\0';
        } else {
            std::string_view lit = id.raw();
            size_t n = lit.size() < sizeof r.request_id - 1 ? lit.size() : sizeof r.request_id - 1;
            for (size_t i = 0; i < n; ++i)
                r.request_id[i] = lit[i];
            r.request_id[n] = '\0';
        }
    }
    if (!id.valid()) { // notifications are never answered (JSON-RPC 2.0 section 4.1)
        if (method.string_equals("notifications/initialized"))
            session.initialized = true;
        json::Value cancelled = root.find("params").find("requestId");
        if (method.string_equals("notifications/cancelled") && m_config.cancel_call &&
            (cancelled.is_string() || cancelled.as_int64()))
            m_config.cancel_call(cancelled.raw(), cancelled.is_string(), session.origin);
        return 0;
    }
    r.start_ns = m_config.now_ns ? m_config.now_ns() : 0;
    if (r.params.valid() && !r.params.is_object()) {
        error_reply(w, id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, "params must be an object",
                    r.request_id, r.timestamp, { { "reason", "params_not_object" } });
        return w.complete() ? w.size() : 0;
    }

    // The era is decided per request (2026-07-28 "Protocol Version Negotiation"): a request
    // naming its revision in _meta is served statelessly; anything else is handshake-era.
    json::Value meta = r.params.find("_meta");
    bool modern = meta.find(kProtocolVersionMeta).valid() || method.string_equals("server/discover") ||
                  session.header_version == kModernVersion;
    bool handled = true;
    if (modern && !modern_envelope(r, root, session)) {
        // answered with the error
    } else if (!authenticate(r, session)) {
        // A key that matches nothing is refused whatever the method: a mistyped key must not
        // appear to connect as anonymous and fail only later.
    } else if (note_provenance(r, session, method); false) {
        // (admitted: the request has its provenance node before anything decides about it)
    } else if (modern && method.string_equals("server/discover"))
        discover(r);
    else if (!modern && method.string_equals("initialize"))
        initialize(r, session);
    else if (!modern && method.string_equals("ping"))
        begin_result(r), w.end_object().end_object();
    else if (method.string_equals("tools/list"))
        tools_list(r);
    else if (method.string_equals("tools/call"))
        tools_call(r, session);
    else if (method.string_equals("resources/list"))
        resources_list(r);
    else if (method.string_equals("resources/read"))
        resources_read(r);
    else if (method.string_equals("resources/templates/list"))
        templates_list(r);
    else if (!modern && m_config.subscriptions && method.string_equals("resources/subscribe"))
        subscribe(r, session, true);
    else if (!modern && m_config.subscriptions && method.string_equals("resources/unsubscribe"))
        subscribe(r, session, false);
    else if (!m_config.prompts.empty() && method.string_equals("prompts/list"))
        prompts_list(r);
    else if (!m_config.prompts.empty() && method.string_equals("prompts/get"))
        prompts_get(r);
    else if (method.string_equals("completion/complete"))
        complete(r);
    else if (!modern && method.string_equals("logging/setLevel"))
        set_log_level(r, session);
    else
        handled = false;
    if (!handled && modern)
        session.reply_kind = ReplyKind::NotFound; // 2026-07-28: so a client can tell a modern server
    if (!handled)
        error_reply(w, id, kMethodNotFound, "Method not found", ErrorCode::ValidationFailed,
                    modern ? "unknown method, or not a method of protocol revision 2026-07-28" : "unknown method",
                    r.request_id, r.timestamp, { { "reason", "unknown_method" } });
    if (r.deferred)
        return 0;
    if (!w.complete()) {
        // The reply did not fit (or a tool wrote something malformed): say so, briefly.
        json::Writer fallback(out);
        error_reply(fallback, id, kInvalidRequest, "Internal error", ErrorCode::InternalError, "reply too large", r.request_id,
                    r.timestamp);
        return fallback.complete() ? fallback.size() : 0;
    }
    return w.size();
}

// A response to a request of ours (a running call's client_request): exactly one of result and
// error, and an id of the kind we issue; anything else is dropped. The host routes it by id and
// by the session it came from.
void Server::client_response(const json::Value& root, const Session& s) {
    json::Value id = root.find("id");
    json::Value result = root.find("result");
    json::Value error = root.find("error");
    if (!m_config.client_response || result.valid() == error.valid() || !(id.is_string() || id.as_int64()))
        return;
    bool is_error = error.valid();
    m_config.client_response(id.raw(), id.is_string(), (is_error ? error : result).json_text(), is_error, s.origin);
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
    const uint64_t now = m_config.now_ns ? m_config.now_ns() : 0;
    // Fingerprinted only where a gate keeps them (a hash per request otherwise for nothing).
    const uint64_t fp = m_config.gate ? AuthGate::fingerprint(text.value_or(key.raw())) : 0;
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
        if (auto p = m_config.keys->authenticate(*text))
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
        error_reply(r.w, r.id, kAuthError, "Unauthorized", ErrorCode::AuthInvalidApiKey, "the API key matches no principal (check it for typos; ./basalt run --key ROLE:SECRET sets the keys)",
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
    if (!m_config.provenance || !(method.string_equals("tools/call") || method.string_equals("resources/read") ||
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
    r.provenance = m_config.provenance(node);
}

bool Server::authorise(Request& r, uint32_t scopes) {
    uint32_t held = (r.principal ? r.principal->scopes : 0) | m_config.anonymous_scopes;
    if ((held & scopes) == scopes)
        return true;
    char required[96];
    format_scopes(scopes, required, sizeof required);
    ErrorCode code = r.principal ? ErrorCode::AuthInsufficientRole : ErrorCode::AuthMissingApiKey;
    if (!r.principal)
        error_reply(r.w, r.id, kAuthError, "Unauthorized", code, "this needs an API key: over HTTP 'Authorization: Bearer <key>' or 'X-MCP-API-Key: <key>', on a line params._meta[\"io.basalt/api-key\"]", r.request_id,
                    r.timestamp, { { "required", required } });
    else
        error_reply(r.w, r.id, kAuthError, "Forbidden", code, "the caller's role lacks a required scope", r.request_id,
                    r.timestamp, { { "role", role_name(r.principal->role) }, { "required", required } });
    audit(r, AuditOutcome::Deny, error_code_name(code));
    return false;
}

void Server::audit(const Request& r, AuditOutcome outcome, const char* code) {
    if (!m_config.audit)
        return;
    uint64_t now = m_config.now_ns ? m_config.now_ns() : 0;
    AuditEvent e { r.request_id, r.timestamp, r.principal, r.transport, r.kind, r.name, outcome, code, 0,
                   r.args_hash, now > r.start_ns ? (now - r.start_ns) / 1000 : 0, r.provenance, r.action, r.target,
                   r.reason ? r.reason : "" };
    m_config.audit(e);
}

void Server::begin_result(Request& r) {
    begin_reply(r.w, r.id);
    r.w.key("result").begin_object();
    if (r.modern) // 2026-07-28: every result names its type
        r.w.key("resultType").string("complete");
}

void Server::cache_hint(Request& r, uint32_t ttl_ms, const char* scope) {
    if (r.modern) // 2026-07-28 "Caching": required on list, read and discover results
        r.w.key("ttlMs").number(uint64_t(ttl_ms)).key("cacheScope").string(scope);
}

// 2026-07-28 requires the protocol version and the client's capabilities on every request; a
// revision this server does not speak gets -32022 with the ones it does.
// In this order: the body's own metadata, then whether the headers agree with it, then whether
// its revision is served (a header naming one revision and a body another is a mismatch, not a
// revision to negotiate).
bool Server::modern_envelope(Request& r, const json::Value& root, Session& s) {
    json::Value meta = r.params.find("_meta");
    json::Value version = meta.find(kProtocolVersionMeta);
    json::Value caps = meta.find(kClientCapabilitiesMeta);
    s.reply_kind = ReplyKind::BadRequest; // until the request is found good
    if (!version.is_string() || !caps.is_object()) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                    "protocol revision 2026-07-28 needs _meta io.modelcontextprotocol/protocolVersion (a string) and "
                    "io.modelcontextprotocol/clientCapabilities (an object) on every request",
                    r.request_id, r.timestamp, { { "reason", "missing_meta" } });
        return false;
    }
    if (s.headers_agree) {
        const Tool* tool = nullptr;
        if (root.find("method").string_equals("tools/call"))
            if (auto name = r.params.find("name").plain_string())
                tool = allowed_tool(*name);
        char why[160];
        if (!s.headers_agree(s.headers_ctx, root, tool, { why, sizeof why })) {
            error_reply(r.w, r.id, kHeaderMismatch, "Header mismatch", ErrorCode::ValidationFailed, why, r.request_id,
                        r.timestamp, { { "reason", "header_mismatch" } });
            return false;
        }
    }
    if (!version.string_equals(kModernVersion)) {
        char requested[32];
        auto n = version.string_into({ requested, sizeof requested - 1 });
        requested[n ? *n : 0] = '\0';
        json::Writer& w = r.w;
        begin_reply(w, r.id);
        w.key("error").begin_object().key("code").number(int64_t(kUnsupportedVersion));
        w.key("message").string("Unsupported protocol version").key("data").begin_object();
        write_envelope_members(w, ErrorCode::ValidationFailed, "this protocol revision is not served", r.request_id,
                               r.timestamp, { { "reason", "unsupported_protocol_version" } });
        // Only revisions that work per request are listed; the 2025 ones are reached by initialize.
        w.key("supported").begin_array().string(kModernVersion).end_array().key("requested").string(requested);
        w.end_object().end_object().end_object();
        return false;
    }
    json::Value level = meta.find(kLogLevelMeta);
    if (level.valid()) {
        auto parsed = parse_log_level(level);
        if (!parsed) {
            error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, "unknown log level",
                        r.request_id, r.timestamp, { { "reason", "invalid_level" } });
            return false;
        }
        r.log_level = static_cast<int8_t>(*parsed);
    }
    s.reply_kind = ReplyKind::Normal;
    r.modern = true;
    return true;
}

// 2026-07-28 "server/discover": versions, capabilities and identity without a handshake.
void Server::discover(Request& r) {
    json::Writer& w = r.w;
    begin_result(r);
    w.key("supportedVersions").begin_array().string(kModernVersion).end_array();
    write_capabilities(w, m_config, true);
    if (m_config.instructions)
        w.key("instructions").string(m_config.instructions);
    cache_hint(r, kStaticTtlMs, "public");
    w.key("_meta").begin_object().key(kServerInfoMeta).begin_object();
    w.key("name").string(m_config.name).key("version").string(m_config.version).end_object().end_object();
    w.end_object().end_object();
}

const Principal* Server::principal_for(std::string_view key) const {
    if (!m_config.keys || key.empty())
        return nullptr;
    auto p = m_config.keys->authenticate(key);
    return p ? *p : nullptr;
}

void Server::initialize(Request& r, Session& s) {
    if (!s.key_per_request)
        s.principal = r.principal; // a line: its key holds for the session
    const char* chosen = kLatestVersion;
    json::Value requested = r.params.find("protocolVersion");
    for (const char* v : kVersions)
        if (requested.string_equals(v))
            chosen = v;
    size_t i = 0;
    for (; chosen[i] && i + 1 < sizeof s.protocol_version; ++i)
        s.protocol_version[i] = chosen[i];
    s.protocol_version[i] = '\0';
    s.client_caps = client_capabilities(r.params.find("capabilities"));
    json::Value info = r.params.find("clientInfo");
    copy_text(s.client_name, info.find("name").plain_string().value_or(""));
    copy_text(s.client_version, info.find("version").plain_string().value_or(""));
    json::Writer& w = r.w;
    begin_reply(w, r.id);
    w.key("result").begin_object();
    w.key("protocolVersion").string(chosen);
    write_capabilities(w, m_config, false);
    w.key("serverInfo").begin_object().key("name").string(m_config.name).key("version").string(m_config.version).end_object();
    if (m_config.instructions)
        w.key("instructions").string(m_config.instructions);
    w.end_object().end_object();
}

bool Server::allowed(std::string_view tool) const {
    for (auto name : m_config.allowlist)
        if (name == tool)
            return true;
    return false;
}

const Tool* Server::allowed_tool(std::string_view name) const {
    return allowed(name) ? find_tool(name) : nullptr;
}

const Tool* Server::find_tool(std::string_view name) const {
    for (const auto& t : m_config.tools)
        if (name == t.name)
            return &t;
    return nullptr;
}

// A paginated list (tools, prompts): the cursor is the decimal offset of the page's first item.
// False when answered with invalid_cursor; otherwise the result is begun, with the lists' cache hint.
bool Server::begin_list(Request& r, uint32_t& offset) {
    offset = 0;
    json::Value cursor = r.params.find("cursor");
    auto text = cursor.plain_string();
    bool ok = !cursor.valid() || (text && !text->empty() && text->size() <= 6);
    for (size_t i = 0; ok && text && i < text->size(); ++i) {
        char c = (*text)[i];
        ok = c >= '0' && c <= '9';
        offset = offset * 10 + uint32_t(c - '0');
    }
    if (!ok) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed, "invalid cursor",
                    r.request_id, r.timestamp, { { "reason", "invalid_cursor" } });
        return false;
    }
    begin_result(r);
    cache_hint(r, kStaticTtlMs, "public");
    return true;
}

void write_next_cursor(json::Writer& w, uint32_t next) {
    char digits[12];
    char text[12];
    uint32_t n = 0;
    do {
        digits[n++] = char('0' + next % 10);
        next /= 10;
    } while (next && n < sizeof digits);
    for (uint32_t k = 0; k < n; ++k)
        text[k] = digits[n - 1 - k];
    w.key("nextCursor").string(std::string_view(text, n));
}

void Server::tools_list(Request& r) {
    uint32_t offset = 0;
    if (!begin_list(r, offset))
        return;
    // Only allowlisted tools are listed: deny by default applies to discovery too.
    json::Writer& w = r.w;
    auto listed = [this](const Tool& t) { return allowed(t.name); };
    write_page(w, "tools", m_config.tools, offset, m_config.page_size, listed, [&w](const Tool& t) {
        w.begin_object().key("name").string(t.name).key("title").string(t.title).key("description").string(t.description);
        w.key("inputSchema").raw(t.input_schema);
        if (t.output_schema)
            w.key("outputSchema").raw(t.output_schema);
        w.end_object();
    });
    w.end_object().end_object();
}

// A failed call's members: what the model reads as text, and the envelope for code under
// _meta["io.basalt/error"]. Never as structuredContent: the spec has structuredContent conform
// to the tool's outputSchema, which describes success, and clients check it even on errors (the
// TypeScript SDK's Client.callTool() throws its own -32602 when it does not conform), so an
// envelope there would hide the failure from the agent. One place for every tool, with or
// without an output schema.
static void write_error_members(json::Writer& w, std::string_view text, std::string_view envelope) {
    w.key("content").begin_array().begin_object().key("type").string("text").key("text").string(text);
    w.end_object().end_array();
    w.key("isError").boolean(true);
    w.key("_meta").begin_object().key(kErrorMetaKey).raw(envelope).end_object();
}

// {"jsonrpc","id","result":{content, structuredContent, isError}}; failures carry the envelope
// (write_error_members). A Content tool's output is the content array itself.
template <typename Begin>
static void write_tool_result(json::Writer& w, Begin&& begin, bool modern, ToolResult kind, bool ok,
                              std::string_view structured, const ToolError& err, std::string_view request_id,
                              std::string_view timestamp) {
    begin(w);
    w.key("result").begin_object();
    if (modern)
        w.key("resultType").string("complete");
    if (ok && kind == ToolResult::Content) {
        w.key("content").raw(structured);
        w.key("isError").boolean(false);
    } else if (ok) {
        w.key("content").begin_array().begin_object().key("type").string("text").key("text").string(structured);
        w.end_object().end_array();
        w.key("structuredContent").raw(structured);
        w.key("isError").boolean(false);
    } else {
        char envelope[1024];
        json::Writer ew(envelope);
        char proposal[12];
        ktl::Formatter(proposal, sizeof proposal).append("%u", static_cast<unsigned>(err.proposal_id));
        char retry[12], replayed[24];
        ktl::Formatter(retry, sizeof retry).append("%u", static_cast<unsigned>(err.retry_after_ms));
        ktl::Formatter(replayed, sizeof replayed).append("%lld", static_cast<long long>(err.replayed_so_far));
        if (err.reason && err.retry_after_ms && err.replayed_so_far >= 0)
            write_envelope(ew, err.code, err.message, request_id, timestamp,
                           { { "reason", err.reason }, { "retry_after_ms", retry, true }, { "replayed_so_far", replayed, true } });
        else if (err.reason && err.retry_after_ms)
            write_envelope(ew, err.code, err.message, request_id, timestamp,
                           { { "reason", err.reason }, { "retry_after_ms", retry, true } });
        else if (err.reason && err.proposal_id)
            write_envelope(ew, err.code, err.message, request_id, timestamp,
                           { { "reason", err.reason }, { "proposal_id", proposal } });
        else if (err.reason)
            write_envelope(ew, err.code, err.message, request_id, timestamp, { { "reason", err.reason } });
        else
            write_envelope(ew, err.code, err.message, request_id, timestamp);
        write_error_members(w, ew.view(), ew.view());
    }
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

// A structured result is an object, a Content result an array (the writer made either well formed).
static bool well_shaped(ToolResult kind, std::string_view out) {
    return !out.empty() && out[0] == (kind == ToolResult::Content ? '[' : '{');
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
                    "request id or progress token too long", r.request_id, r.timestamp, { { "reason", "id_too_long" } });
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
    if (!m_config.start_call(tool, arguments, call, err)) {
        m_limiter.release(who);
        write_tool_result(r.w, [&](json::Writer& w) { begin_reply(w, r.id); }, r.modern, tool.result, false, {}, err,
                          r.request_id, r.timestamp);
        r.reason = err.reason;
        audit(r, AuditOutcome::Error, error_code_name(err.code));
        return;
    }
    r.deferred = true;
}

// {"jsonrpc":"2.0","id":<the deferred call's id, as the client wrote it>
static void begin_call_reply(json::Writer& w, const PendingCall& call) {
    w.begin_object().key("jsonrpc").string("2.0").key("id");
    if (call.id_is_string)
        w.raw_string({ call.id, call.id_len });
    else
        w.raw({ call.id, call.id_len });
}

void Server::audit_call(const PendingCall& call, AuditOutcome outcome, const char* code, const char* reason) {
    if (!m_config.audit)
        return;
    char now[32] = "unknown";
    if (m_config.now_rfc3339)
        m_config.now_rfc3339(now, sizeof now);
    uint64_t t = m_config.now_ns ? m_config.now_ns() : 0;
    AuditEvent e { call.request_id, now, call.principal, call.transport ? call.transport : m_config.transport,
                   AuditKind::Tool, call.tool, outcome, code,
                   call.token_id, call.args_hash, t > call.start_ns ? (t - call.start_ns) / 1000 : 0, call.provenance_id,
                   call.action, call.target, reason ? reason : "" };
    m_config.audit(e);
}

size_t Server::finish_call(const PendingCall& call, bool ok, std::string_view structured, const ToolError& err,
                           bool cancelled, std::span<char> out) {
    m_limiter.release(call.principal ? call.principal->id : 0);
    if (cancelled) {
        audit_call(call, AuditOutcome::Error, "cancelled");
        return 0;
    }
    ToolError e = err;
    if (ok && (!json::valid_utf8(structured) || !well_shaped(call.result, structured))) {
        ok = false;
        e = { ErrorCode::InternalError, "malformed tool output" };
    }
    char now[32] = "unknown";
    if (m_config.now_rfc3339)
        m_config.now_rfc3339(now, sizeof now);
    json::Writer w(out);
    auto begin = [&](json::Writer& wr) { begin_call_reply(wr, call); };
    write_tool_result(w, begin, call.modern, call.result, ok, structured, e, call.request_id, now);
    audit_call(call, ok ? AuditOutcome::Allow : AuditOutcome::Error, ok ? "" : error_code_name(e.code), ok ? nullptr : e.reason);
    if (!w.complete()) {
        json::Writer fallback(out);
        ToolError big { ErrorCode::LimitOutputExceeded, "reply too large for the line" };
        write_tool_result(fallback, begin, call.modern, call.result, false, {}, big, call.request_id, now);
        return fallback.complete() ? fallback.size() : 0;
    }
    return w.size();
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

void Server::tools_call(Request& r, Session& s) {
    json::Value arguments;
    if (!named_request(r, AuditKind::Tool, "tools/call needs a name and an arguments object", arguments))
        return;
    std::string_view tool_name = r.name;
    const Tool* tool = allowed_tool(tool_name);
    if (!tool) {
        refuse_unknown(r, kInvalidParams, "Unknown tool", "no such tool, or it is not on the allowlist", { "tool", tool_name });
        return;
    }
    r.action = tool->action ? tool->action : "call";
    describe_target(*tool, arguments, r.target);
    if (!authorise(r, tool->scopes))
        return;
    // Validate against the declared schema; a schema we cannot read fails closed.
    {
        auto schema_doc = json::Document::parse(tool->input_schema, m_schema_nodes);
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
        bool valid = schema_doc && schema::validate(schema_doc->root(), instance, failure);
        if (!schema_doc)
            failure.reason = schema::Reason::SchemaUnsupported;
        if (!valid) {
            refuse_arguments(r, s, tool_name, failure);
            return;
        }
    }
    if (r.modern && !declared_needs(r, s, *tool))
        return;
    std::string_view answers, carried;
    if (r.modern && !gather_input(r, { "tools/call", bound_name(tool_name), r.args_hash, r.principal ? r.principal->id : uint16_t(0) },
                                  answers, carried))
        return;
    uint16_t who = r.principal ? r.principal->id : 0;
    if (!admit(r))
        return;
    if (m_config.start_call) {
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
    if (ok && (!sw.complete() || !well_shaped(tool->result, sw.view()))) {
        ok = false;
        err = sw.error() == ktl::Error::Full ? ToolError { ErrorCode::LimitOutputExceeded, "output over 65,536 bytes" }
                                             : ToolError { ErrorCode::InternalError, "malformed tool output" };
    }
    write_tool_result(r.w, [&](json::Writer& w) { begin_reply(w, r.id); }, r.modern, tool->result, ok, sw.view(), err,
                      r.request_id, r.timestamp);
    r.reason = ok ? "" : err.reason;
    audit(r, ok ? AuditOutcome::Allow : AuditOutcome::Error, ok ? "" : error_code_name(err.code));
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
    write_envelope_members(w, ErrorCode::ValidationFailed, "this tool asks the client for input the request did not declare it can give",
                           r.request_id, r.timestamp, { { "reason", "missing_client_capability" } });
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
        return refuse("inputResponses must be an object of responses keyed as the inputRequests were", "invalid_input_responses");
    for (json::Value v = responses.first(); v.valid(); v = v.next_sibling())
        if (!v.is_object())
            return refuse("each input response must be an object (an ElicitResult, CreateMessageResult or ListRootsResult)",
                          "invalid_input_responses");
    if (responses.valid() && responses.raw().size() > InputRound::kMaxAnswers)
        return refuse("the input responses are over 16 KiB", "input_too_large");
    if (state.valid()) {
        // The state's text is dead once opened: what it carried is in m_state_payload.
        auto n = state.is_string() ? state.string_into({ m_state_text, sizeof m_state_text })
                                   : ktl::Result<size_t>(ktl::Error::Corrupt);
        StateCheck check = n ? open_state(m_config.state_key, binding, m_config.now_ns ? m_config.now_ns() : 0,
                                          { m_state_text, *n }, m_state_payload, carried)
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
std::string_view Server::bound_name(std::string_view name) {
    return name.substr(0, sizeof(PendingCall::tool) - 1);
}

size_t Server::input_required(const PendingCall& call, std::string_view requests, std::string_view used, bool used_fits,
                              std::span<char> out) {
    m_limiter.release(call.principal ? call.principal->id : 0);
    json::Writer w(out);
    auto begin = [&](json::Writer& wr) { begin_call_reply(wr, call); };
    const StateBinding b { "tools/call", call.tool, call.args_hash, call.principal ? call.principal->id : uint16_t(0) };
    if (used_fits &&
        write_input_required(w, begin, m_config.state_key, b, m_config.now_ns ? m_config.now_ns() : 0, requests, used,
                             m_state_text) &&
        w.complete()) {
        audit_call(call, AuditOutcome::Allow, "input_required");
        return w.size();
    }
    char now[32] = "unknown";
    if (m_config.now_rfc3339)
        m_config.now_rfc3339(now, sizeof now);
    json::Writer fallback(out);
    ToolError e { ErrorCode::LimitOutputExceeded, "the input this call needs, or has been given, is too large to carry to another round",
                  "input_too_large" };
    write_tool_result(fallback, begin, true, call.result, false, {}, e, call.request_id, now);
    audit_call(call, AuditOutcome::Error, error_code_name(e.code));
    return fallback.complete() ? fallback.size() : 0;
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
    const std::initializer_list<Detail> details = { { "reason", reason }, { "path", failure.path }, { "keyword", keyword } };
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
    auto decision = m_limiter.acquire(who, m_config.now_ns ? m_config.now_ns() : 0, r.principal ? &r.principal->limits : nullptr,
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

bool Server::resource_allowed(std::string_view uri) const {
    for (auto u : m_config.resource_allowlist)
        if (u == uri)
            return true;
    return false;
}

void Server::resources_list(Request& r) {
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kStaticTtlMs, "public");
    w.key("resources").begin_array();
    for (const auto& res : m_config.resources) {
        if (!resource_allowed(res.uri))
            continue;
        w.begin_object().key("uri").string(res.uri).key("name").string(res.name).key("title").string(res.title);
        w.key("description").string(res.description);
        w.key("mimeType").string(res.mime_type ? res.mime_type : "application/json").end_object();
    }
    w.end_array().end_object().end_object();
}

void Server::resources_read(Request& r) {
    auto uri = r.params.find("uri").plain_string();
    r.kind = AuditKind::Resource;
    r.name = uri.value_or("");
    r.action = "read";
    if (!admit_inline(r))
        return;
    if (uri && read_contents(r, *uri))
        return; // a resource that writes its own contents, or a template's
    const Resource* res = nullptr;
    if (uri && resource_allowed(*uri))
        for (const auto& candidate : m_config.resources)
            if (*uri == candidate.uri)
                res = &candidate;
    if (!res) {
        // Unknown resource: -32002 in the 2025 revisions ("Resources", error handling), -32602 in
        // 2026-07-28, which retired -32002. The envelope names the contract code either way.
        refuse_unknown(r, r.modern ? kInvalidParams : kResourceNotFound, "Resource not found",
                       "no such resource, or it is not on the allowlist", { "uri", uri.value_or("") });
        return;
    }
    if (!authorise(r, res->scopes))
        return;
    json::Writer sw(m_scratch);
    sw.begin_object();
    sw.key("uri").string(res->uri).key("version").string(res->payload_version);
    sw.key("generated_at").string(r.timestamp).key("source_commit").string(m_config.source_commit);
    ToolError err;
    bool ok = res->read(sw, err);
    sw.end_object();
    if (!output_ready(r, ok, sw, err, "Resource unavailable"))
        return;
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kLiveTtlMs, "private");
    w.key("contents").begin_array().begin_object();
    w.key("uri").string(res->uri).key("mimeType").string("application/json").key("text").string(sw.view());
    w.end_object().end_array().end_object().end_object();
    audit(r, AuditOutcome::Allow, "");
}

// Route (deny by default): an unknown or unlisted tool, resource or prompt never reaches a
// handler; the envelope says validation_unknown_tool (envelope.h has the JSON-RPC codes).
// An unknown resource's data also names its URI where SEP-2164 puts it (data.uri), beside the
// envelope's members.
void Server::refuse_unknown(Request& r, int rpc_code, const char* rpc_message, std::string_view message, Detail detail) {
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

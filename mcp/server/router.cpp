// The JSON-RPC router: one message in, at most one reply out. It decides what the message is
// (a request, a notification, a response to a request of ours), which protocol era serves it
// (per request: 2026-07-28's stateless envelope or the handshake era), runs the pipeline's first
// steps (pipeline.cpp) and hands the request to its method (tools.cpp, resources.cpp, prompts.cpp,
// resource_extras.cpp, logging.cpp).
#include "server.h"

#include "dispatch.h"
#include "envelope.h"
#include "client_request.h"
#include <ktl/decimal.h>

namespace mcp {
namespace {

constexpr const char* kVersions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };
// 2026-07-28 protocol errors: HTTP headers that disagree with the body ("Streamable HTTP",
// Request Metadata), a revision the server does not serve ("Protocol Version Negotiation").
constexpr int kHeaderMismatch = -32020, kUnsupportedVersion = -32022;

// 2026-07-28 per-request metadata keys.
constexpr const char* kLogLevelMeta = "io.modelcontextprotocol/logLevel";
constexpr const char* kServerInfoMeta = "io.modelcontextprotocol/serverInfo";
} // namespace

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
    m_host.now_rfc3339(now, sizeof now);
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
    const uint64_t received = m_host.now_ns(); // a tools/call's stages begin here
    json::Writer w(out);
    session.reply_kind = ReplyKind::Normal;
    Request r { w, {}, {}, "", "unknown", nullptr, AuditKind::Tool, {}, 0, 0, false };
    r.origin = session.origin;
    r.reply_to = session.reply_to;
    r.transport = session.transport ? session.transport : m_config.transport;
    m_host.now_rfc3339(r.timestamp, sizeof r.timestamp);

    json::ParseError perr;
    auto doc = json::Document::parse(message, m_nodes, {}, &perr);
    // A message with more values than the Server's own arena (a batch of vectors as JSON
    // arrays): parsed again in an arena of the size it can need, held until it is answered.
    struct LargeArena {
        Host& host;
        json::Node* nodes = nullptr;
        ~LargeArena() {
            if (nodes)
                host.free_nodes(nodes);
        }
    } large { m_host };
    if (!doc && perr.reason == json::Reason::ArenaFull) {
        size_t need = json::value_bound(message);
        need = need < kMaxMessageValues ? need : kMaxMessageValues;
        large.nodes = m_host.alloc_nodes(need);
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
    if (!root.is_object() || !root.find("jsonrpc").string_equals("2.0") || !id_ok ||
        (method.valid() && !method.is_string())) {
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
        if (method.string_equals("notifications/cancelled") && (cancelled.is_string() || cancelled.as_int64()))
            m_host.cancel(cancelled.raw(), cancelled.is_string(), session.origin);
        return 0;
    }
    r.start_ns = m_host.now_ns();
    if (method.string_equals("tools/call")) {
        r.timed = true;
        r.received_ns = received;
        r.lap_ns = r.start_ns;
        m_stages.add_since(CallStages::Parse, received, r.start_ns);
    }
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
    } else if (lap(r, CallStages::Authenticate), note_provenance(r, session, method), lap(r, CallStages::Provenance);
               false) {
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
        error_reply(fallback, id, kInvalidRequest, "Internal error", ErrorCode::InternalError, "reply too large",
                    r.request_id, r.timestamp);
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
    if (result.valid() == error.valid() || !(id.is_string() || id.as_int64()))
        return;
    bool is_error = error.valid();
    m_host.respond(id.raw(), id.is_string(), (is_error ? error : result).json_text(), is_error, s.origin);
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
    w.key("serverInfo")
        .begin_object()
        .key("name")
        .string(m_config.name)
        .key("version")
        .string(m_config.version)
        .end_object();
    if (m_config.instructions)
        w.key("instructions").string(m_config.instructions);
    w.end_object().end_object();
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
    char digits[20];
    w.key("nextCursor").string(ktl::format_decimal(next, digits));
}
} // namespace mcp

#include "streamable_http.h"

#include <crypto/sha256.h>
#include <http/fields.h>
#include <http/response.h>
#include <mcp/server/envelope.h>
#include <mcp/transport/mirrored_headers.h>
#include <ktl/decimal.h>

namespace mcp {

struct HttpTransport::Reply {
    std::span<char> out;
    const char* session_id = nullptr; // echoed in Mcp-Session-Id
    bool keep_alive = true;
};

namespace {

constexpr std::string_view kPath = "/mcp";

// What an OAuth-capable client needs to hear when it meets a 401 here: not a token problem to
// solve with discovery and registration, but an API key to configure. RFC 6750 parameters.
constexpr const char* kChallenge =
    "Bearer realm=\"basalt\", error=\"invalid_request\", error_description=\"this server takes an API key, not "
    "OAuth: send it as 'Authorization: Bearer <key>' or 'X-MCP-API-Key: <key>'\"";
constexpr const char* kNoOAuth = "this server does not use OAuth; it takes an API key: send it with every request as "
                                 "'Authorization: Bearer <key>' or 'X-MCP-API-Key: <key>'";

// The paths OAuth clients probe after a 401 (RFC 9728 and RFC 8414 metadata, RFC 7591
// registration, the authorize and token endpoints).
bool oauth_probe(std::string_view path) {
    return path.starts_with("/.well-known/oauth-") || path.starts_with("/.well-known/openid-configuration") ||
           path == "/register" || path == "/authorize" || path == "/token";
}
// Metadata documents (RFC 9728, RFC 8414, OpenID discovery): 404, which the SDK's discovery takes
// as "no OAuth here" and moves on. The endpoints (RFC 7591 registration, RFC 6749 authorize and
// token): 400, as those RFCs answer a request they will not serve.
bool oauth_metadata(std::string_view path) { return path.starts_with("/.well-known/"); }
constexpr const char* kRetryAfterSeconds = "1"; // the rate bucket refills 20 calls a second
constexpr uint64_t kHttpSource = 1ull << 40;    // gate sources: HTTP peers apart from lines

// Headers every response carries.
void common_headers(http::ResponseWriter& w, bool keep_alive) {
    w.header("Server", "basalt");
    if (!keep_alive)
        w.header("Connection", "close");
}

size_t finish(http::ResponseWriter& w) { return w.overflow() ? 0 : w.size(); }

} // namespace

HttpTransport::HttpTransport(Server& server, const HttpConfig& config) : m_server(server), m_config(config) {}

// MCP security guidance: session ids must be secure and non-deterministic. Each is 128 bits
// straight from the host's cryptographic generator, never derived from time or a counter.
void HttpTransport::new_session_id(char* out) {
    uint8_t bits[kSessionIdLength / 2];
    m_config.random(bits, sizeof bits);
    for (size_t i = 0; i < sizeof bits; ++i) {
        out[2 * i] = "0123456789abcdef"[bits[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[bits[i] & 0xf];
    }
    out[kSessionIdLength] = '\0';
}

HttpTransport::Slot* HttpTransport::find_session(std::string_view id) {
    if (id.size() != kSessionIdLength)
        return nullptr;
    for (auto& s : m_slots) {
        if (!s.used)
            continue;
        // Constant time per candidate: an id is a bearer secret for its session.
        uint8_t diff = 0;
        for (size_t i = 0; i < kSessionIdLength; ++i)
            diff |= static_cast<uint8_t>(s.id[i] ^ id[i]);
        if (diff == 0)
            return &s;
    }
    return nullptr;
}

HttpTransport::Slot* HttpTransport::new_session(const Principal* opener) {
    if (!m_config.random)
        return nullptr; // no generator, no unguessable ids: no sessions
    expire_idle();
    Slot* slot = nullptr;
    for (auto& s : m_slots)
        if (!s.used) {
            slot = &s;
            break;
        }
    // Full: an authenticated caller makes room from its own sessions, else from anonymous ones.
    // Nobody displaces another principal's session, and an anonymous caller displaces nothing.
    auto oldest = [this](const Principal* of) {
        Slot* found = nullptr;
        for (auto& s : m_slots)
            if (s.used && s.opener == of && (!found || s.last_used_ns < found->last_used_ns))
                found = &s;
        return found;
    };
    if (!slot && opener)
        slot = oldest(opener);
    if (!slot && opener)
        slot = oldest(nullptr);
    if (!slot)
        return nullptr;
    uint8_t generation = static_cast<uint8_t>(slot->generation + 1);
    *slot = Slot {};
    slot->used = true;
    slot->generation = generation;
    slot->last_used_ns = now();
    new_session_id(slot->id);
    slot->opener = opener;
    slot->session.principal = m_config.default_principal;
    slot->session.key_per_request = true;
    // Request ids are scoped to the session: origin names slot and generation.
    slot->session.origin = static_cast<uint32_t>((slot - m_slots) + 1) | uint32_t(generation) << 8;
    return slot;
}

void HttpTransport::expire_idle() {
    uint64_t t = now();
    for (auto& s : m_slots)
        if (s.used && t - s.last_used_ns > m_config.session_idle_ns)
            s.used = false;
}

std::string_view HttpTransport::header_key(const http::Head& head) {
    if (auto auth = head.header("authorization"))
        return http::bearer_token(*auth).value_or(*auth); // malformed: compared as it came
    return head.header("x-mcp-api-key").value_or(std::string_view());
}

bool HttpTransport::key_allowed(const Slot& slot, std::string_view key, const crypto::Digest* hashed) {
    if (!slot.key_bound || key.empty())
        return true; // without a key the request simply has no role beyond the guest's
    const crypto::Digest digest = hashed ? *hashed : crypto::Sha256::hash(key);
    uint8_t diff = 0;
    for (size_t i = 0; i < sizeof slot.key_hash; ++i)
        diff |= static_cast<uint8_t>(slot.key_hash[i] ^ digest[i]);
    return diff == 0;
}

size_t HttpTransport::sessions_open() const {
    size_t n = 0;
    for (const auto& s : m_slots)
        n += s.used;
    return n;
}

size_t HttpTransport::refuse(Reply& r, uint16_t status, ErrorCode code, const char* message, const char* reason) {
    char now_text[32] = "unknown";
    if (m_config.now_rfc3339)
        m_config.now_rfc3339(now_text, sizeof now_text);
    // Refusals before the dispatcher have no JSON-RPC id: they get one of their own.
    char request_id[24] = "http-";
    size_t k = 5;
    char digits[20];
    for (char c : ktl::format_decimal(++m_refusals, digits))
        if (k + 1 < sizeof request_id)
            request_id[k++] = c;
    request_id[k] = '\0';
    if ((status == 401 || status == 403) && m_config.audit) {
        AuditEvent e {
            request_id, now_text, nullptr, "http", AuditKind::Auth, reason, AuditOutcome::Deny, error_code_name(code),
            0,          0,        0,       0,      "authenticate",  {}
        };
        m_config.audit(e);
    }
    char body[512];
    json::Writer jw({ body, sizeof body });
    write_envelope(jw, code, message, request_id, now_text, { { "reason", reason } });
    return envelope_response(r, status, jw.view());
}

// OAuth clients read refusals from these endpoints as RFC 6749 section 5.2 errors (`error` a
// string code, `error_description` the sentence); the canonical envelope, whose `error` is an
// object, fails their parser and hides the sentence from the user behind "Invalid OAuth error
// response". So these, and only these, answer in OAuth's shape.
size_t HttpTransport::oauth_refusal(Reply& r, std::string_view path) {
    char body[384];
    json::Writer jw({ body, sizeof body });
    jw.begin_object().key("error").string("invalid_request").key("error_description").string(kNoOAuth).end_object();
    http::ResponseWriter w(r.out);
    w.status(oauth_metadata(path) ? 404 : 400);
    common_headers(w, r.keep_alive);
    w.header("Cache-Control", "no-store"); // RFC 6749 section 5.1: nothing from these is cached
    w.header("Content-Type", "application/json")
        .header("Content-Length", uint64_t(jw.view().size()))
        .end_head()
        .body(jw.view());
    return finish(w);
}

// A refusal: its status, the headers that status calls for, the canonical envelope as body.
size_t HttpTransport::envelope_response(Reply& r, uint16_t status, std::string_view envelope) {
    http::ResponseWriter w(r.out);
    w.status(status);
    common_headers(w, r.keep_alive);
    if (status == 401)
        w.header("WWW-Authenticate", kChallenge);
    if (status == 405)
        w.header("Allow", "GET, POST, DELETE");
    if (status == 429)
        w.header("Retry-After", kRetryAfterSeconds);
    w.header("Content-Type", "application/json")
        .header("Content-Length", uint64_t(envelope.size()))
        .end_head()
        .body(envelope);
    return finish(w);
}

size_t HttpTransport::error_response(std::span<char> out, uint16_t status, const char* reason) {
    Reply r { out, nullptr, false }; // the stream cannot be trusted past a malformed request
    ErrorCode code = status >= 500 ? ErrorCode::InternalError : ErrorCode::ValidationFailed;
    return refuse(r, status, code, "the HTTP request could not be read", reason);
}

HttpOutcome HttpTransport::handle(const http::Head& head, std::string_view body, uint32_t conn, std::span<char> out,
                                  uint64_t peer) {
    HttpOutcome outcome;
    Reply r { out, nullptr, head.keep_alive };
    outcome.close = !head.keep_alive;
    auto respond = [&](size_t n) {
        outcome.len = n;
        return outcome;
    };
    if (oauth_probe(head.path))
        return respond(oauth_refusal(r, head.path));
    if (head.path != kPath)
        return respond(refuse(r, 404, ErrorCode::NotFound, "no such endpoint; MCP is served on /mcp", "unknown_path"));

    // DNS rebinding: only names on the allowlist, in Host and (browsers) Origin.
    auto host_port = head.authority.empty() ? std::nullopt : http::parse_host(head.authority);
    if (!host_port || !http::host_allowed(host_port->host, m_config.allowed_hosts))
        return respond(refuse(r, 403, ErrorCode::ValidationFailed, "Host not allowed", "host_not_allowed"));
    if (auto origin = head.header("origin")) {
        auto o = http::parse_origin(*origin);
        if (!o || !http::host_allowed(o->host, m_config.allowed_hosts))
            return respond(refuse(r, 403, ErrorCode::ValidationFailed, "Origin not allowed", "origin_not_allowed"));
    }
    // A POST's version is judged with its body (post()): a 2026-07-28 request is answered in
    // JSON-RPC terms, with its id.
    if (auto version = head.header("mcp-protocol-version");
        version && head.method != http::Method::Post && !Server::serves_version(*version))
        return respond(refuse(r, 400, ErrorCode::ValidationFailed, "unsupported MCP-Protocol-Version",
                              "unsupported_protocol_version"));

    switch (head.method) {
    case http::Method::Post: return respond(post(r, head, body, conn, outcome, peer));
    case http::Method::Get: return respond(open_stream(r, head, outcome));
    case http::Method::Delete: {
        auto id = head.header("mcp-session-id");
        if (!id)
            return respond(refuse(r, 400, ErrorCode::ValidationFailed, "Mcp-Session-Id required", "missing_session"));
        Slot* s = find_session(*id);
        if (!s)
            return respond(refuse(r, 404, ErrorCode::NotFound, "no such session", "unknown_session"));
        if (!key_allowed(*s, header_key(head)))
            return respond(refuse(r, 403, ErrorCode::AuthInvalidApiKey, "this session was opened with another key",
                                  "session_key_mismatch"));
        s->used = false;
        http::ResponseWriter w(out);
        w.status(204);
        common_headers(w, r.keep_alive);
        w.end_head();
        return respond(finish(w));
    }
    default:
        return respond(
            refuse(r, 405, ErrorCode::ValidationFailed, "use POST, GET or DELETE on /mcp", "method_not_allowed"));
    }
}

size_t HttpTransport::open_stream(Reply& r, const http::Head& head, HttpOutcome& outcome) {
    auto accept = head.header("accept");
    if (!accept || !http::accepts(*accept, "text/event-stream"))
        return refuse(r, 406, ErrorCode::ValidationFailed, "GET needs Accept: text/event-stream", "not_acceptable");
    auto id = head.header("mcp-session-id");
    if (!id) // 2026-07-28 clients are stateless: nothing belongs to them outside their requests
        return refuse(r, 405, ErrorCode::ValidationFailed, "a standalone stream needs a session (Mcp-Session-Id)",
                      "method_not_allowed");
    Slot* s = find_session(*id);
    if (!s)
        return refuse(r, 404, ErrorCode::NotFound, "no such session (expired or ended); initialize again",
                      "unknown_session");
    if (!key_allowed(*s, header_key(head)))
        return refuse(r, 403, ErrorCode::AuthInvalidApiKey, "this session was opened with another key",
                      "session_key_mismatch");
    if (s->streaming)
        return refuse(r, 409, ErrorCode::ValidationFailed, "this session's stream is already open", "stream_open");
    s->streaming = true;
    s->last_used_ns = now();
    outcome.kind = HttpOutcome::Stream;
    outcome.session = s->session.origin;
    return sse_head(r.out, true);
}

HttpTransport::Slot* HttpTransport::by_origin(uint32_t origin) {
    uint32_t index = (origin & 0xff) - 1;
    if (origin & 0x80000000u || index >= kMaxSessions)
        return nullptr;
    Slot& s = m_slots[index];
    return s.used && s.session.origin == origin ? &s : nullptr;
}

Session* HttpTransport::session(uint32_t origin) {
    Slot* s = by_origin(origin);
    return s ? &s->session : nullptr;
}

void HttpTransport::stream_closed(uint32_t origin) {
    if (Slot* s = by_origin(origin))
        s->streaming = false;
}

size_t HttpTransport::next_notification(uint32_t origin, std::span<char> out, bool* gone) {
    Slot* s = by_origin(origin);
    *gone = s == nullptr;
    if (!s)
        return 0;
    s->last_used_ns = now(); // a session listening on its stream is not idle
    size_t n = m_server.next_resource_update(s->session, { m_scratch, sizeof m_scratch });
    return n ? sse_event(out, { m_scratch, n }) : 0;
}

size_t HttpTransport::post(Reply& r, const http::Head& head, std::string_view body, uint32_t conn, HttpOutcome& outcome,
                           uint64_t peer) {
    auto type = head.header("content-type");
    if (!type || !http::media_type_is(*type, "application/json"))
        return refuse(r, 415, ErrorCode::ValidationFailed, "Content-Type must be application/json",
                      "unsupported_media_type");
    auto accept = head.header("accept");
    if (!accept || !http::accepts(*accept, "application/json") || !http::accepts(*accept, "text/event-stream"))
        return refuse(r, 406, ErrorCode::ValidationFailed, "Accept must cover application/json and text/event-stream",
                      "not_acceptable");
    if (body.empty())
        return refuse(r, 400, ErrorCode::ValidationFailed, "empty body", "empty_body");

    // What kind of message: the session rules depend on it. The dispatcher parses it again and
    // answers malformed ones itself.
    auto doc = json::Document::parse(body, m_nodes);
    json::Value root = doc ? doc->root() : json::Value();
    json::Value method = root.find("method");
    bool is_request = root.is_object() && method.is_string() && root.find("id").valid();
    bool initialize = is_request && method.string_equals("initialize");
    const auto header_version = head.header("mcp-protocol-version");
    json::Value body_version = root.find("params").find("_meta").find(Server::kProtocolVersionMeta);
    bool modern = method.string_equals("server/discover") || body_version.valid() ||
                  (header_version && *header_version == Server::kModernVersion);
    if (!modern && header_version && !Server::serves_version(*header_version))
        return refuse(r, 400, ErrorCode::ValidationFailed, "unsupported MCP-Protocol-Version",
                      "unsupported_protocol_version");

    // The key this request presents, wherever it travels: every request that needs a role carries
    // one (a session never stands in for it).
    if (auto auth = head.header("authorization"); auth && !http::bearer_token(*auth))
        return refuse(r, 401, ErrorCode::AuthInvalidApiKey, "Authorization must be 'Bearer <key>'",
                      "bad_authorization");
    const std::string_view header_key = HttpTransport::header_key(head);
    std::string_view meta_key = root.find("params").find("_meta").find(Server::kApiKeyMeta).plain_string().value_or("");
    std::string_view presented = !meta_key.empty() ? meta_key : header_key;
    // One SHA-256 of it serves the session's binding here and, for a key in a header, the
    // dispatcher's gate and key store (Session::api_key_digest).
    const crypto::Digest presented_digest = presented.empty() ? crypto::Digest {} : crypto::Sha256::hash(presented);

    Slot* slot = nullptr;
    Session stateless;
    Session* session = &stateless;
    auto session_id = head.header("mcp-session-id");
    if (initialize) {
        const Principal* opener = m_server.principal_for(presented);
        slot = new_session(opener);
        if (!slot)
            return refuse(r, 503, ErrorCode::LimitConcurrencyExceeded,
                          opener ? "every session slot is held by other callers"
                                 : "every session slot is taken; an anonymous caller cannot displace one",
                          "sessions_full");
        if (opener) {
            for (size_t i = 0; i < sizeof slot->key_hash; ++i)
                slot->key_hash[i] = presented_digest[i];
            slot->key_bound = true;
        }
        session = &slot->session;
        r.session_id = slot->id;
    } else if (session_id) {
        slot = find_session(*session_id);
        if (!slot)
            return refuse(r, 404, ErrorCode::NotFound, "no such session (expired or ended); initialize again",
                          "unknown_session");
        if (!key_allowed(*slot, presented, &presented_digest))
            return refuse(r, 403, ErrorCode::AuthInvalidApiKey, "this session was opened with another key",
                          "session_key_mismatch");
        slot->last_used_ns = now();
        session = &slot->session;
    } else if (!modern && doc) {
        return refuse(r, 400, ErrorCode::ValidationFailed, "Mcp-Session-Id required (initialize first)",
                      "missing_session");
    }
    if (session == &stateless) {
        stateless.principal = m_config.default_principal;
        stateless.origin = 0x80000000u | conn; // ids of a stateless request are its connection's
        // A response from the client would come in a POST of its own, with no session to route it
        // by: calls of a stateless request cannot ask the client anything.
        stateless.client_replies = false;
    }
    session->reply_to = conn;
    session->source = kHttpSource | peer; // the gate counts failures per peer address

    // The key travels in a header; the dispatcher authenticates it like a key in _meta.
    session->api_key = header_key;
    session->api_key_digest = meta_key.empty() && !header_key.empty() ? &presented_digest : nullptr;
    // 2026-07-28: the headers must mirror the body; the dispatcher asks (after the body's own
    // _meta, before the revision) on the message as it parsed it.
    struct Mirror {
        const http::Head* head;
        std::span<json::Node> nodes;
    } mirror { &head, m_schema_nodes };
    session->header_version = header_version.value_or(std::string_view());
    session->headers_ctx = &mirror;
    session->headers_agree = [](const void* ctx, const json::Value& request, const Tool* tool, std::span<char> why) {
        auto* m = static_cast<const Mirror*>(ctx);
        return mirrored_headers_agree(*m->head, request, tool, m->nodes, why);
    };

    size_t n = m_server.handle(body, *session, { m_scratch, sizeof m_scratch });
    session->api_key = {};
    session->api_key_digest = nullptr;
    session->header_version = {};
    session->headers_agree = nullptr;
    session->headers_ctx = nullptr;
    if (n == 0) {
        if (is_request) { // deferred: a tool task answers later on this connection
            outcome.kind = HttpOutcome::Deferred;
            return 0;
        }
        http::ResponseWriter w(r.out); // notification or response: accepted, nothing to say
        w.status(202);
        common_headers(w, r.keep_alive);
        w.header("Content-Length", uint64_t(0)).end_head();
        return finish(w);
    }
    std::string_view reply(m_scratch, n);
    if (session->reply_kind != ReplyKind::Normal) {
        // 2026-07-28 protocol errors have statuses of their own; the JSON-RPC error is the body.
        http::ResponseWriter w(r.out);
        w.status(session->reply_kind == ReplyKind::NotFound ? 404 : 400);
        common_headers(w, r.keep_alive);
        w.header("Content-Type", "application/json").header("Content-Length", uint64_t(n)).end_head().body(reply);
        return finish(w);
    }

    // Auth and limit refusals are transport-level failures: their status, the envelope as body.
    // Only a reply with an "error" member can be one, and the dispatcher writes that key as it
    // is: a reply without the text "error": anywhere (most of them) is not parsed again.
    if (initialize || reply.find(R"("error":)") != std::string_view::npos) {
        auto answer = json::Document::parse(reply, m_nodes);
        json::Value envelope = answer ? answer->root().find("error").find("data") : json::Value();
        ErrorCode code;
        auto name = envelope.find("error").find("code").plain_string();
        if (name && parse_error_code(*name, code) && http_status(code) != 200) {
            if (initialize)
                slot->used = false;
            return envelope_response(r, http_status(code), envelope.raw());
        }
        if (initialize && !answer->root().find("result").valid())
            slot->used = false; // a failed initialize leaves no session behind
    }
    http::ResponseWriter w(r.out);
    w.status(200);
    common_headers(w, r.keep_alive);
    if (r.session_id && slot->used)
        w.header("Mcp-Session-Id", r.session_id);
    w.header("Content-Type", "application/json").header("Content-Length", uint64_t(n)).end_head().body(reply);
    return finish(w);
}

size_t HttpTransport::sse_head(std::span<char> out, bool keep_alive) {
    http::ResponseWriter w(out);
    w.status(200);
    common_headers(w, keep_alive);
    w.header("Content-Type", "text/event-stream").header("Cache-Control", "no-cache");
    w.header("Transfer-Encoding", "chunked").end_head();
    return finish(w);
}

namespace {

// One chunk of a chunked body (RFC 9112 section 7.1) around an SSE frame written by `frame`.
template <typename Frame>
size_t chunk(std::span<char> out, Frame&& frame) {
    constexpr size_t kPrefix = 8 + 2; // up to 8 hex digits and CRLF
    if (out.size() < kPrefix + 2)
        return 0;
    size_t n = frame(out.subspan(kPrefix, out.size() - kPrefix - 2));
    if (n == 0)
        return 0;
    char hex[8];
    size_t digits = 0;
    for (size_t v = n; v != 0 || digits == 0; v >>= 4)
        hex[digits++] = "0123456789abcdef"[v & 0xf];
    // Move the frame right after the real prefix.
    size_t prefix = digits + 2;
    for (size_t i = 0; i < digits; ++i)
        out[i] = hex[digits - 1 - i];
    out[digits] = '\r';
    out[digits + 1] = '\n';
    for (size_t i = 0; i < n; ++i)
        out[prefix + i] = out[kPrefix + i];
    out[prefix + n] = '\r';
    out[prefix + n + 1] = '\n';
    return prefix + n + 2;
}

} // namespace

size_t HttpTransport::sse_event(std::span<char> out, std::string_view json) {
    return chunk(out, [&](std::span<char> o) { return http::write_sse_event(o, "message", {}, json); });
}

size_t HttpTransport::sse_comment(std::span<char> out) {
    return chunk(out, [&](std::span<char> o) { return http::write_sse_comment(o, "keep-alive"); });
}

size_t HttpTransport::sse_end(std::span<char> out) {
    constexpr std::string_view kLast = "0\r\n\r\n";
    if (out.size() < kLast.size())
        return 0;
    for (size_t i = 0; i < kLast.size(); ++i)
        out[i] = kLast[i];
    return kLast.size();
}

size_t HttpTransport::json_response(std::span<char> out, std::string_view json, bool keep_alive) {
    http::ResponseWriter w(out);
    w.status(200);
    common_headers(w, keep_alive);
    w.header("Content-Type", "application/json").header("Content-Length", uint64_t(json.size())).end_head().body(json);
    return finish(w);
}

} // namespace mcp

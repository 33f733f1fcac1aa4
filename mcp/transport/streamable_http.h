#pragma once
// MCP's Streamable HTTP transport on one endpoint, /mcp (MCP spec 2025-11-25, "Transports"), in
// front of the one dispatcher (mcp::Server) the serial line uses too. Portable: the kernel's
// HTTP task feeds it complete requests and carries its bytes; host tests drive it directly.
//
// Per request, in this order (each failure has its status and the canonical envelope as body):
//  1. path /mcp, else 404; method POST, GET or DELETE, else 405 with Allow. The paths OAuth
//     clients probe after a 401 (/.well-known/oauth-*, /register, /authorize, /token) answer in
//     RFC 6749's error shape instead, the one thing their parsers read: 404 for metadata, 400
//     for the endpoints, saying that this server takes an API key.
//  2. DNS-rebinding guard: the Host name and, when sent, the Origin must be on the allowlist
//     (403). A browser page on another site can reach 127.0.0.1 but cannot forge these.
//  3. POST: Content-Type application/json (415), Accept covering application/json and
//     text/event-stream (406), a body (400). GET: Accept text/event-stream (406) and a session
//     (400 / 404; 405 for stateless 2026-07-28 clients, which have none): the session's standalone
//     SSE stream, one at a time (409), carrying what belongs to no request: notifications/
//     resources/updated for its subscriptions and, after logging/setLevel, kernel log records.
//     DELETE ends a session (and its stream).
//  4. MCP-Protocol-Version, when sent, must be a revision we serve (400); a 2026-07-28 request's
//     is judged with its body, in JSON-RPC terms (below).
//  5. Sessions (2025 revisions): initialize creates one and names it in Mcp-Session-Id; every
//     later request must carry it (400 without, 404 for an unknown or expired id). 2026-07-28
//     requests (protocolVersion in _meta, or that MCP-Protocol-Version) are stateless and need
//     none; their headers must mirror the body (mirrored_headers.h), which the dispatcher
//     reports as -32020 HeaderMismatch after checking the body's own _meta. Their protocol
//     errors have statuses: 400 for invalid _meta, a header mismatch, a revision not served or
//     an undeclared client capability; 404 for a method the revision does not have; the
//     JSON-RPC error, with the request's id, is the body.
//  6. The API key from `Authorization: Bearer KEY` or `X-MCP-API-Key: KEY` goes to the
//     dispatcher, which authenticates, authorises, validates and limits as on the serial line.
//     Its auth and limit refusals become 401 (with WWW-Authenticate), 403 and 429 (with
//     Retry-After), the envelope as body; everything else is a 200 JSON-RPC answer.
//  7. Notifications and responses: 202, no body (a response goes to the dispatcher, which hands it
//     to the call that asked: ServerConfig::client_response, routed by id and session). A
//     tools/call the dispatcher deferred (it runs in a tool task) is answered later on the same
//     connection: application/json when the answer is all there is, or an SSE stream (chunked)
//     once a progress or log notification, or a request to the client (sampling, elicitation),
//     comes first.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <http/request.h>
#include <mcp/server/server.h>

namespace mcp {

struct HttpConfig {
    std::span<const std::string_view> allowed_hosts;    // Host / Origin names (no ports)
    const Principal* default_principal = nullptr;       // callers without a key (nullptr: anonymous)
    uint64_t session_idle_ns = 30ull * 60 * 1000000000; // idle sessions expire
    uint64_t (*now_ns)() = nullptr;
    void (*now_rfc3339)(char* out, size_t cap) = nullptr; // envelope timestamps
    // Session ids: 128 bits from the host's cryptographic generator (the kernel's ChaCha20,
    // seeded from hardware entropy). Without it there are no sessions (initialize is refused).
    void (*random)(uint8_t* out, size_t len) = nullptr;
    // Transport-level security refusals (Host/Origin, malformed Authorization) are audited like
    // the dispatcher's own decisions.
    void (*audit)(const AuditEvent& event) = nullptr;
};

struct HttpOutcome {
    enum Kind : uint8_t {
        Respond,  // out[0..len) is the whole response
        Deferred, // a tools/call runs: its output arrives for this connection (reply_to) later
        Stream,   // out[0..len) opens the session's standalone SSE stream; next_notification() feeds it
    } kind = Respond;
    size_t len = 0;
    bool close = false;   // close the connection after the response
    uint32_t session = 0; // Stream: the session's origin
};

class HttpTransport {
public:
    static constexpr size_t kMaxSessions = 64;
    static constexpr size_t kSessionIdLength = 32; // hex of 128 bits

    HttpTransport(Server& server, const HttpConfig& config);

    // One complete request on connection `conn` (any value the host uses to route deferred
    // output; it becomes PendingCall::reply_to) from `peer` (the peer's address: the source the
    // authentication gate counts failures by).
    HttpOutcome handle(const http::Head& head, std::string_view body, uint32_t conn, std::span<char> out,
                       uint64_t peer = 0);

    // Deferred output, framed for the connection. A notification before the answer starts an
    // SSE response (sse_head once, then sse_event per message, sse_end after the last); an
    // answer with no stream yet is a plain JSON response.
    static size_t sse_head(std::span<char> out, bool keep_alive);
    static size_t sse_event(std::span<char> out, std::string_view json);
    static size_t sse_comment(std::span<char> out); // keep-alive on a quiet stream
    static size_t sse_end(std::span<char> out);
    static size_t json_response(std::span<char> out, std::string_view json, bool keep_alive);
    // A response for a request that could not be read (the HTTP parser's status), envelope body.
    size_t error_response(std::span<char> out, uint16_t status, const char* reason);

    // The next message for the standalone stream of session `origin`, framed as an SSE chunk
    // (0: nothing now). *gone: the session ended; send sse_end and close.
    size_t next_notification(uint32_t origin, std::span<char> out, bool* gone);
    // The stream's connection closed: the session may open another.
    void stream_closed(uint32_t origin);
    // The session behind an origin (nullptr once it ended), e.g. to forward log records.
    Session* session(uint32_t origin);

    size_t sessions_open() const;
    void expire_idle(); // drops sessions idle for longer than the configured time

private:
    struct Slot {
        bool used = false;
        char id[kSessionIdLength + 1] = "";
        uint8_t generation = 0;
        bool streaming = false; // its standalone GET stream is open
        uint64_t last_used_ns = 0;
        // Who opened it (nullptr: anonymous) and, if a key was presented then, that key's SHA-256:
        // only to refuse another key on this session, never to stand in for one.
        const Principal* opener = nullptr;
        bool key_bound = false;
        uint8_t key_hash[32] = {};
        Session session;
    };
    struct Reply;
    Slot* find_session(std::string_view id);
    Slot* by_origin(uint32_t origin);
    size_t open_stream(Reply& r, const http::Head& head, HttpOutcome& outcome);
    // A slot for a new session opened by `opener` (nullptr: anonymous). When every slot is taken,
    // an authenticated caller displaces its own least recently used session, or, having none, the
    // oldest anonymous one; an anonymous caller displaces nobody (nullptr: refused).
    Slot* new_session(const Principal* opener);
    // Whether a request presenting `key` (empty: none) may use the session: any request without a
    // key may (it acts as the guest), one with a key only if it is the key that opened the session.
    // hashed: key's SHA-256 if the caller has it already.
    static bool key_allowed(const Slot& slot, std::string_view key, const crypto::Digest* hashed = nullptr);
    // The key in Authorization (Bearer) or X-MCP-API-Key; empty if none.
    static std::string_view header_key(const http::Head& head);
    void new_session_id(char* out);
    uint64_t now() const { return m_config.now_ns ? m_config.now_ns() : 0; }
    size_t refuse(Reply& r, uint16_t status, ErrorCode code, const char* message, const char* reason);
    size_t envelope_response(Reply& r, uint16_t status, std::string_view envelope);
    size_t oauth_refusal(Reply& r, std::string_view path);
    size_t post(Reply& r, const http::Head& head, std::string_view body, uint32_t conn, HttpOutcome& outcome,
                uint64_t peer);

    Server& m_server;
    HttpConfig m_config;
    Slot m_slots[kMaxSessions];
    uint64_t m_refusals = 0;        // numbers request_id of transport-level refusals ("http-N")
    json::Node m_nodes[4096];       // peeking at a message's method and _meta before dispatch
    json::Node m_schema_nodes[512]; // a tool's input schema, for its x-mcp-header parameters
    char m_scratch[192 * 1024];
};

} // namespace mcp

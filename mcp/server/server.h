#pragma once
// The MCP dispatcher (portable; one instance per transport line). It takes one JSON-RPC
// message and produces at most one reply. Both eras of the protocol are served, per request:
//  - the handshake era: initialize negotiates 2025-11-25 (preferred), 2025-06-18 or 2025-03-26
//    (MCP spec 2025-11-25 "Lifecycle": the server answers with the client's version when it
//    supports it, otherwise with its latest). Served: initialize, notifications/initialized,
//    ping, tools/list (cursor pagination), tools/call, resources/list, resources/read,
//    resources/templates/list, logging/setLevel; and, when configured, prompts/list, prompts/get,
//    completion/complete (prompts.cpp), resources/subscribe and resources/unsubscribe
//    (resource_extras.cpp).
//  - 2026-07-28 (stateless): a request that names its revision in
//    params._meta["io.modelcontextprotocol/protocolVersion"] needs no initialize; it must also
//    carry ["io.modelcontextprotocol/clientCapabilities"]. Served: server/discover, tools/list,
//    tools/call, resources/list, resources/read, resources/templates/list, prompts/list,
//    prompts/get, completion/complete. Every result carries
//    resultType; list and read results carry ttlMs and cacheScope; logging is opted into per
//    request (["io.modelcontextprotocol/logLevel"]); ping, logging/setLevel and initialize are
//    not methods of that revision.
// A message without a method is a response to a request a running call sent the client
// (client_request, client_request.h): it is handed to the host (Host::respond)
// and never answered.
// The request pipeline (docs/security.md) before anything runs: authenticate (the line's
// principal, or an API key presented in params._meta["io.basalt/api-key"]), route (deny by
// default: allowlists for tools and resources), authorise (scopes), validate (the tool's input
// schema), limit (per-principal rate and concurrency); every outcome goes to the audit hook.
// Failures carry the canonical error envelope (see envelope.h for where it sits).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <json/json.h>
#include <json/writer.h>
#include <mcp/policy/auth_gate.h>
#include <mcp/policy/call_limiter.h>
#include <mcp/policy/error_code.h>
#include <mcp/policy/key_store.h>
#include <mcp/policy/provenance.h>
#include <mcp/server/call_stages.h>
#include <mcp/server/host.h>
#include <mcp/server/input_round.h>
#include <mcp/schema/compiled.h>
#include <mcp/server/request_state.h>

namespace mcp {
struct Detail; // envelope.h

// The most a tool result, resource snapshot or prompt may write (the per-call output limit).
constexpr size_t kMaxToolOutput = 65536;

struct ToolError {
    ErrorCode code = ErrorCode::InternalError;
    const char* message = "";
    const char* reason = nullptr; // details.reason of the envelope (e.g. validation_failed), if any
    uint32_t proposal_id = 0;     // details.proposal_id: the proposal a held-back call became (step_up_required)
    uint32_t retry_after_ms = 0;  // details.retry_after_ms: when to try again (unavailable), 0: not said
    int64_t replayed_so_far =
        -1; // details.replayed_so_far: how far the store's recovery is (unavailable), -1: not said
};

// What a tool's body writes. Structured: one JSON object, conforming to the output schema; the
// server sends it as structuredContent and as its text. Content: the result's `content` array
// itself (text, image, audio, resource items: MCP "Tool Result"), no output schema and no
// structuredContent. Failures are the same for both: isError true, the envelope as the text and
// in _meta (envelope.h), no structuredContent.
enum class ToolResult : uint8_t { Structured, Content };

struct Tool {
    const char* name;
    const char* title;
    const char* description;
    const char* input_schema;  // JSON text
    const char* output_schema; // JSON text (structuredContent conforms to it); nullptr for Content
    uint32_t scopes;           // all of them are required
    // Writes the structured result as one JSON object (or, for Content, the content array) into
    // w; false + err on failure.
    bool (*run)(const json::Value& arguments, json::Writer& w, ToolError& err);
    ToolResult result = ToolResult::Structured;
    // What the tool cannot work without asking the client (ClientCapability bits,
    // client_request.h). A 2026-07-28 request that does not declare them is refused before the
    // tool runs (MissingRequiredClientCapabilityError): the spec forbids relying on undeclared ones.
    uint8_t client_needs = 0;
    // For the audit trail: what the call does to what ("drop", "write"; nullptr: "call"), and the
    // argument naming its target (a collection), recorded with how many "ids" the call names.
    const char* action = nullptr;
    const char* target_key = nullptr;
};

// What a resource's contents() is asked for: the URI as requested (for a template, the expanded
// one), the template's variables in template order, and the time (for resources that change).
struct TemplateVar {
    std::string_view name;
    std::string_view value;
};
struct ResourceRead {
    std::string_view uri;
    std::span<const TemplateVar> vars;
    uint64_t now_ns;
};

// A read-only snapshot resource. read() writes the snapshot's own members into an object the
// server opens with version, generated_at and source_commit (contracts "Resources").
// A resource may instead write its contents entry itself (contents != nullptr): the text or
// blob member (base64) of an entry the server opens with uri and mimeType and closes with
// `_meta` {version, generated_at, source_commit}. revision (optional) says when it changes, for
// resources/subscribe: a subscriber is told (notifications/resources/updated) when it moves.
struct Resource {
    const char* uri;
    const char* name;
    const char* title;
    const char* description;
    uint32_t scopes;
    const char* payload_version; // schema version of the payload
    bool (*read)(json::Writer& w, ToolError& err);
    const char* mime_type = nullptr; // nullptr: application/json (the snapshot)
    bool (*contents)(const ResourceRead& in, json::Writer& w, ToolError& err) = nullptr;
    uint64_t (*revision)(uint64_t now_ns) = nullptr;
};

// A named argument of a prompt or a variable of a resource template, with the values
// completion/complete offers for it (prefix matches, in this order).
struct Argument {
    const char* name;
    const char* description;
    bool required;
    std::span<const char* const> completions = {};
};

// RFC 6570 level 1 (simple {var} expansion) templates: a variable matches 1..kMaxVarLength
// characters of [A-Za-z0-9._~-] (no '/', no '%': nothing to decode, nothing to traverse).
struct ResourceTemplate {
    const char* uri_template;
    const char* name;
    const char* title;
    const char* description;
    const char* mime_type;
    uint32_t scopes;
    const char* payload_version;
    std::span<const Argument> variables; // in the order they appear in uri_template
    bool (*contents)(const ResourceRead& in, json::Writer& w, ToolError& err);
};

// A prompt (MCP "Prompts"). get() writes the `messages` array; its arguments have been checked
// against `arguments` (declared names only, required ones present, strings of at most
// kMaxPromptArgument bytes) and are passed as the request's object.
struct Prompt {
    const char* name;
    const char* title;
    const char* description;
    std::span<const Argument> arguments;
    uint32_t scopes;
    bool (*get)(const json::Value& arguments, json::Writer& w, ToolError& err);
    // A prompt that needs the client's input (2026-07-28, input_round.h): get_input replaces get.
    // `round` holds the client's answers and takes requests for more (any request ends the round
    // with an InputRequiredResult); nullptr in the 2025 revisions, which have no way to ask here.
    bool (*get_input)(const json::Value& arguments, InputRound* round, json::Writer& w, ToolError& err) = nullptr;
};

// One decision of the pipeline (contracts "Audit record"). Argument values and keys never
// appear: arguments only as a hash.
enum class AuditKind : uint8_t { Tool, Resource, Auth, Prompt, Peer }; // Peer: a cluster datagram refused
enum class AuditOutcome : uint8_t { Allow, Deny, Error };
struct AuditEvent {
    std::string_view request_id;
    std::string_view timestamp;
    const Principal* principal; // nullptr: anonymous
    const char* transport;
    AuditKind kind;
    std::string_view name;
    AuditOutcome outcome;
    const char* code; // error code name, "" when allowed
    uint64_t token_id;
    uint64_t args_hash; // first 8 bytes of SHA-256 of the arguments' JSON text, 0 without
    uint64_t duration_us;
    uint64_t provenance_id = 0; // the request's provenance node (0: none, e.g. refused at authentication)
    const char* action = "";    // what it does: "call", "read", "get", "drop", ...
    std::string_view target;    // what it acts on: a collection and how many ids, a URI
    const char* reason =
        ""; // details.reason of a refusal or failure, when it has one (declined, proposal_pending, ...)
    uint64_t started_ns = 0; // a tools/call's: when it was admitted (Host::now_ns), 0 for the others
};

const char* audit_kind_name(AuditKind kind);
const char* audit_outcome_name(AuditOutcome outcome);

// MCP logging levels (RFC 5424 names, MCP spec "Logging"), lowest first.
enum class LogLevel : uint8_t { Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency };
const char* log_level_name(LogLevel level);

// An admitted tools/call that the host runs asynchronously (the kernel: in a tool task, while
// the line keeps being served). Everything the reply needs is copied here: the request's buffers
// are gone by the time the call finishes.
struct PendingCall {
    char id[80] = ""; // the request id as written (escaped body for strings)
    uint8_t id_len = 0;
    bool id_is_string = false;
    char request_id[80] = "";
    char progress_token[80] = ""; // _meta.progressToken as written, if any
    uint8_t progress_len = 0;
    bool progress_is_string = false;
    bool has_progress = false;
    const Principal* principal = nullptr;
    char tool[48] = "";
    uint64_t args_hash = 0;
    uint64_t start_ns = 0;
    uint64_t received_ns = 0;        // when the message reached the Server (CallStages::Call begins)
    uint64_t token_id = 0;           // set by the host: the execution token issued for this call
    bool modern = false;             // asked under 2026-07-28: the result carries resultType
    int8_t log_level = -1;           // 2026-07-28 per-request logging opt-in (a LogLevel), -1: none
    uint32_t origin = 0;             // Session::origin of the request: ids are unique only within it
    uint32_t reply_to = 0;           // Session::reply_to: where the transport delivers the answer
    const char* transport = nullptr; // Session::transport (nullptr: the server's)
    // Notifications/message the call itself emits (call_log) go out at or above this level: the
    // request's logLevel (2026-07-28) or the session's logging/setLevel when the call began; -1: none.
    int8_t notify_level = -1;
    ToolResult result = ToolResult::Structured; // the tool's kind of output
    // What the client can be asked while the call runs (ClientCapability bits, client_request.h):
    // the session's declared capabilities, or the 2026-07-28 request's own; 0 when the transport
    // could not bring a response back.
    uint8_t client_caps = 0;
    // 2026-07-28: the client's answers to the call's earlier input requests: the request's
    // inputResponses (an object's text) and the answers its requestState carried (an object's
    // members). Valid only during start_call, which copies them; empty when there are none or
    // the call is of the 2025 era.
    std::string_view answers;
    std::string_view carried;
    // The request's provenance node (the execution token is bound to it) and, for the audit
    // trail when the call ends, what it does to what.
    uint64_t provenance_id = 0;
    const char* action = "call";
    char target[64] = "";
    bool matches(std::string_view raw_id, bool is_string, uint32_t from) const {
        return from == origin && is_string == id_is_string && raw_id == std::string_view(id, id_len);
    }
};

// The server's settings, plain values read-only while it runs; what it asks of whoever runs it
// (clock, audit, provenance, running calls) is the Host's (host.h).
struct ServerConfig {
    const char* name = "basalt";
    const char* version = "0";
    const char* source_commit = "unknown";
    const char* instructions = nullptr;
    std::span<const Tool> tools;
    std::span<const std::string_view> allowlist; // tool names that may run
    std::span<const Resource> resources;
    std::span<const std::string_view> resource_allowlist; // resource URIs (and URI templates) that may be read
    std::span<const ResourceTemplate> resource_templates;
    std::span<const Prompt> prompts;
    std::span<const std::string_view> prompt_allowlist; // prompt names that may be listed and got
    // Scopes every caller holds, authenticated or not (0 but in a test profile: see roles.h).
    uint32_t anonymous_scopes = 0;
    // The host delivers notifications/resources/updated (it calls next_resource_update): only then
    // are resources/subscribe and unsubscribe served and `subscribe` declared.
    bool subscriptions = false;
    const KeyStore* keys = nullptr; // nullptr: no key is ever accepted
    const char* transport = "serial";
    // Tools (and prompts) per list page: every one in the first by default, since clients that
    // read one page only (several do) would never see the rest. Pagination stays for smaller pages.
    uint32_t page_size = 64;
    // Slows repeated authentication failures per source before any key is checked (nullptr: no gate).
    AuthGate* gate = nullptr;
    // Seals the requestState of 2026-07-28 input rounds (request_state.h): 32 random bytes drawn
    // at boot. Empty: no call can ask for input across rounds.
    std::span<const uint8_t> state_key;
};

// A resources/subscribe of the session: the resource (index in ServerConfig::resources) and the
// revision its subscriber last heard of.
struct Subscription {
    uint16_t resource = 0;
    uint64_t revision = 0;
};

// How a reply is to be carried where the transport has its own words for failures (HTTP status
// codes of 2026-07-28 "Streamable HTTP"): protocol errors about the request itself (invalid
// _meta, headers that disagree with the body, a revision not served, an undeclared client
// capability) are Bad Requests; a method that is not served is Not Found.
enum class ReplyKind : uint8_t { Normal, BadRequest, NotFound };

struct Session {
    const Principal* principal = nullptr; // who this line acts as (nullptr: anonymous)
    bool initialized = false;
    char protocol_version[16] = "";
    bool logging = false; // the client asked for notifications/message
    LogLevel log_level = LogLevel::Info;
    // Set by the transport: which client session this is (request ids are scoped to it) and
    // where answers to its deferred calls go (HTTP: the connection waiting for them).
    uint32_t origin = 0;
    uint32_t reply_to = 0;
    // What the audit trail and provenance name as this session's transport, when it is not the
    // server's own (nullptr): the console's decisions, which the HTTP bridge carries out.
    const char* transport = nullptr;
    // What the client declared at initialize (ClientCapability bits), and whether the transport
    // can bring its responses back to this session (HTTP: not without a session to post them to).
    uint8_t client_caps = 0;
    bool client_replies = true;
    // The clientInfo it declared at initialize (cut to fit; for provenance, never trusted).
    char client_name[32] = "";
    char client_version[16] = "";
    // An API key the transport received out of band (HTTP Authorization / X-MCP-API-Key) for
    // the message being handled; a key in params._meta takes precedence. Valid during handle().
    std::string_view api_key;
    // Its SHA-256 when the transport already computed it (nullptr: hash api_key here). Valid
    // during handle().
    const crypto::Digest* api_key_digest = nullptr;
    // Streamable HTTP, for the message being handled: the MCP-Protocol-Version header (empty:
    // none; 2026-07-28 makes a request stateless even without _meta, which it then lacks), and
    // the check that the headers mirroring a 2026-07-28 request agree with its body ("Request
    // Metadata"): asked by handle() on the message as it parsed it, so no body escapes it. The
    // request's JSON-RPC object and the tool a tools/call names (nullptr if none it serves);
    // false with the reason in why. nullptr: nothing is mirrored (the serial line). Valid during
    // handle().
    std::string_view header_version;
    bool (*headers_agree)(const void* ctx, const json::Value& request, const Tool* tool, std::span<char> why) = nullptr;
    const void* headers_ctx = nullptr;
    // Set by handle() for the transport.
    ReplyKind reply_kind = ReplyKind::Normal;
    // HTTP: every request authenticates with its own key; a key presented at initialize does not
    // become the session's principal (MCP security guidance: sessions are not authentication).
    bool key_per_request = false;
    // Where requests come from, for the authentication gate (HTTP: the peer's address; a serial
    // line: an id of its own). Set by the transport.
    uint64_t source = 0;
    static constexpr size_t kMaxSubscriptions = 8;
    Subscription subscriptions[kMaxSubscriptions];
    uint8_t subscription_count = 0;
};

class Server {
public:
    // config, limiter and host outlive the Server.
    Server(const ServerConfig& config, CallLimiter& limiter, Host& host)
        : m_config(config), m_limiter(limiter), m_host(host) {}

    // Reads the input schema of every tool on the allowlist once, for validate() (call it once the
    // configuration is complete, before the first message; a tool it did not read is read at its
    // first call instead).
    void compile_schemas();
    // Handles one message. Returns the reply length written into out (0: nothing to send).
    size_t handle(std::string_view message, Session& session, std::span<char> out);
    // Who a key names (nullptr: nobody), for a transport that must decide before dispatch.
    const Principal* principal_for(std::string_view key) const;
    // A line too long for the transport: a JSON-RPC error without an id.
    size_t oversized(uint64_t discarded, std::span<char> out);
    // A notifications/message for a log record, if the session asked for that level.
    size_t log_message(const Session& session, LogLevel level, std::string_view logger, std::string_view text,
                       std::span<char> out);

    // The answer to a call handed to Host::start. Cancelled calls get no answer (MCP
    // "Cancellation"); the decision is still audited. Returns the reply length (0: none).
    size_t finish_call(const PendingCall& call, bool ok, std::string_view structured, const ToolError& err,
                       bool cancelled, std::span<char> out);
    // finish_call in two steps, for a host that answers a call that changed stored data only once
    // the change is durable, and does other work meanwhile: close_call checks the result and
    // audits the call (Host::audit's answer in `durable`); answer_call, later, releases the
    // caller's concurrency slot and writes the answer, a success turned into storage_failed when
    // `durable` is false by then. Nothing the call needs is kept in the Server in between.
    struct Closed {
        bool ok;
        bool durable;
        ToolError err;
        char now[32]; // a failure's timestamp, the same in its envelope and its audit record
    };
    Closed close_call(const PendingCall& call, bool ok, std::string_view structured, const ToolError& err);
    size_t answer_call(const PendingCall& call, const Closed& closed, std::string_view structured, std::span<char> out);
    // A request to the client on behalf of a running call (sampling/createMessage,
    // elicitation/create): `id` a plain string the host issued, `params` one JSON object. Returns
    // the message length (0: it did not fit, or params is not an object). The host checks first
    // that the call's client_caps carry capability_for(method).
    static size_t client_request(std::string_view id, std::string_view method, std::string_view params,
                                 std::span<char> out);
    // The answer to a 2026-07-28 call whose body asked for the client's input (input_round.h):
    // an InputRequiredResult with `requests` (members of inputRequests) and a requestState
    // carrying `used` (members: the answers the body used). Audited; returns the reply length.
    // used_fits false (InputRound::used_fits): the answers used so far cannot all travel on, and
    // the call is refused (input_too_large) rather than asking again for ever.
    size_t input_required(const PendingCall& call, std::string_view requests, std::string_view used, bool used_fits,
                          std::span<char> out);
    // notifications/progress for a call that asked for it (MCP "Progress"); 0 when it did not.
    size_t progress(const PendingCall& call, uint64_t done, uint64_t total, std::string_view message,
                    std::span<char> out);
    // notifications/message that a running call emits itself (logger: the tool), if the call's
    // notify_level lets it through; 0 otherwise. Sent before the call's result (MCP "Logging").
    size_t call_log(const PendingCall& call, LogLevel level, std::string_view text, std::span<char> out);
    // The next notifications/resources/updated the session is owed (a subscribed resource whose
    // revision moved since its subscriber last heard); 0 when none. Call until 0 (at most
    // Session::kMaxSubscriptions).
    size_t next_resource_update(Session& session, std::span<char> out);

    // Where the time of this Server's tools/calls went (call_stages.h). The host adds the stages
    // it runs itself (a deferred call's body, the send) and reads them all from outside.
    CallStages& stages() { return m_stages; }
    const CallStages& stages() const { return m_stages; }
    uint64_t now_ns() { return m_host.now_ns(); }

    static constexpr const char* kApiKeyMeta = "io.basalt/api-key";
    static constexpr const char* kProtocolVersionMeta = "io.modelcontextprotocol/protocolVersion";
    // A revision this server speaks (handshake era or 2026-07-28).
    static bool serves_version(std::string_view version);
    // The tool a tools/call names, if it is on the allowlist (nullptr otherwise): a transport
    // that mirrors arguments into headers (x-mcp-header) checks them against its input schema.
    const Tool* allowed_tool(std::string_view name) const;

    static constexpr const char* kLatestVersion = "2025-11-25"; // newest handshake-era revision
    static constexpr const char* kModernVersion = "2026-07-28";
    static constexpr size_t kMaxPromptArgument = 256;  // bytes of one prompt argument or completion value
    static constexpr size_t kMaxCompletions = 100;     // values in one completion (MCP's maximum)
    static constexpr size_t kOwnNodes = 4096;          // values of a message parsed in place
    static constexpr size_t kMaxMessageValues = 65536; // values of one message at most (alloc_nodes)

private:
    struct Request;
    void initialize(Request& r, Session& s);
    void client_response(const json::Value& root, const Session& s);
    bool modern_envelope(Request& r, const json::Value& root, Session& s);
    void discover(Request& r);
    void begin_result(Request& r);
    void cache_hint(Request& r, uint32_t ttl_ms, const char* scope);
    void tools_list(Request& r);
    void tools_call(Request& r, Session& s);
    bool declared_needs(Request& r, Session& s, const Tool& tool);
    bool gather_input(Request& r, const StateBinding& binding, std::string_view& fresh, std::string_view& carried);
    static std::string_view bound_name(std::string_view name);
    void resources_list(Request& r);
    void resources_read(Request& r);
    void set_log_level(Request& r, Session& s);
    void templates_list(Request& r);
    bool read_contents(Request& r, std::string_view uri); // resource_extras.cpp: contents() resources and templates
    void subscribe(Request& r, Session& s, bool on);
    void prompts_list(Request& r);
    void prompts_get(Request& r);
    void complete(Request& r);
    bool begin_list(Request& r, uint32_t& offset);
    void refuse_unknown(Request& r, int rpc_code, const char* rpc_message, std::string_view message, Detail detail);
    bool named_request(Request& r, AuditKind kind, const char* refusal, json::Value& arguments);
    bool output_ready(Request& r, bool ok, const json::Writer& out, ToolError& err, const char* refusal);
    const Resource* find_resource(std::string_view uri) const;
    const ResourceTemplate* match_template(std::string_view uri, TemplateVar* vars, size_t max_vars,
                                           size_t& nvars) const;
    const Prompt* find_prompt(std::string_view name) const;
    bool authenticate(Request& r, Session& s);
    void note_provenance(Request& r, const Session& s, const json::Value& method);
    void make_node(Request& r, const Session& s, std::string_view method);
    // The caller's rate and concurrency admission (a slot held until released). False: refused,
    // answered and audited. admit_inline: the same for work done in the bridge itself (resource
    // reads, prompts), the slot given back at once.
    bool validate(Request& r, const Session& s, const Tool& tool, const json::Value& arguments);
    const schema::Compiled* compiled_schema(const Tool& tool);
    void refuse_arguments(Request& r, const Session& s, std::string_view tool, const schema::Failure& failure);
    bool admit(Request& r);
    bool admit_inline(Request& r);
    bool authorise(Request& r, uint32_t scopes);
    void audit(const Request& r, AuditOutcome outcome, const char* code);
    // The end of stage `s` of a timed request (a tools/call): one clock reading.
    void lap(Request& r, CallStages::Stage s);
    bool resource_allowed(std::string_view uri) const;
    void start_pending(Request& r, const Session& s, const Tool& tool, const json::Value& arguments,
                       std::string_view answers, std::string_view carried);
    // timestamp: the decision's time as text, when the caller has it already (nullptr: taken now).
    // False: what the call changed may not be durable (Host::audit).
    bool audit_call(const PendingCall& call, AuditOutcome outcome, const char* code, const char* reason = nullptr,
                    const char* timestamp = nullptr);
    bool allowed(std::string_view tool) const;
    const Tool* find_tool(std::string_view name) const;

    const ServerConfig& m_config;
    CallLimiter& m_limiter;
    Host& m_host;
    json::Node m_nodes[kOwnNodes];
    // Input schemas read once (compile_schemas); a tool's own nodes for one the set has no room for.
    schema::CompiledSet m_schemas;
    json::Node m_schema_nodes[schema::kMaxSchemaNodes];
    // Where one request's tool result, resource snapshot or prompt messages are written before
    // they go into its reply. A Server handles one message at a time, so one buffer serves every
    // kind; it belongs to this Server (one per line), never to a function shared by all of them.
    char m_scratch[kMaxToolOutput];
    // 2026-07-28 input rounds: a requestState's text and payload (what it carried), and the
    // round of a prompt that asks (tools' rounds live with their calls).
    char m_state_payload[kMaxStatePayload];
    char m_state_text[kMaxState];
    InputRound m_round;
    CallStages m_stages;
};

} // namespace mcp

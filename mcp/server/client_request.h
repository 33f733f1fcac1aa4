#pragma once
// Requests the server sends to the client while a tool runs (MCP 2025-11-25 "Sampling" and
// "Elicitation"): the part both bridges share. A running call has at most one such request
// outstanding; its ClientExchange is the mailbox between the tool task, which writes the
// request and waits, and the bridge, which sends it under an id of its own ("srv-N") and routes
// the client's response back. A response reaches an exchange only when its id AND its session
// (origin) match: the ids of another session never do. Every part is bounded: the method, the
// params, the response (a larger one is refused whole, never cut), the nodes it is parsed into.
//
// Threads: the tool task and the bridge touch an exchange concurrently; the state is the only
// shared word (atomic), and each side writes the other fields only in the states it owns:
// the tool in Idle, Answered and Withdrawn (writing a request), the bridge in Queued (sending)
// and Filling (copying the answer).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <json/json.h>

namespace mcp {

// What the client declared it handles: initialize's capabilities (2025 revisions, per session)
// or the request's _meta clientCapabilities (2026-07-28). Bits of PendingCall::client_caps.
enum ClientCapability : uint8_t { kClientSampling = 1, kClientElicitation = 2, kClientRoots = 4 };
// The bits for a capabilities object ({"sampling":{},"elicitation":{}}); 0 for anything else.
uint8_t client_capabilities(const json::Value& caps);
// The capability a server-to-client method needs; 0 for a method this server never sends.
uint8_t capability_for(std::string_view method);
// Whether a client that declared `declared` (ClientCapability bits) may be sent `method`.
bool may_ask(uint8_t declared, std::string_view method);
// The capabilities object's member name of one ClientCapability bit ("sampling", ...).
const char* capability_name(ClientCapability bit);
// The capabilities a 2026-07-28 request declares: its params._meta clientCapabilities.
constexpr const char* kClientCapabilitiesMeta = "io.modelcontextprotocol/clientCapabilities";
// 2026-07-28: the client's name and version, per request (the handshake era's clientInfo).
constexpr const char* kClientInfoMeta = "io.modelcontextprotocol/clientInfo";
uint8_t declared_capabilities(const json::Value& params);

class ClientExchange {
public:
    enum class State : uint8_t {
        Idle,      // nothing asked yet
        Queued,    // written by the tool, waiting for the bridge
        Sent,      // on its way to the client under id()
        Filling,   // the bridge is copying the client's response in
        Answered,  // outcome() says what came back
        Withdrawn, // the tool stopped waiting (cancelled, past its deadline): late answers are dropped
    };
    enum class Outcome : uint8_t {
        Result,   // response(): the result object
        Error,    // response(): the error object
        TooLarge, // over kMaxResponse: nothing kept
        Unsent,   // the request could not be written (over the bridge's message buffer)
    };
    static constexpr size_t kMaxMethod = 32;
    static constexpr size_t kMaxParams = 8192;
    static constexpr size_t kMaxResponse = 16384;
    static constexpr size_t kMaxId = 24;
    static constexpr size_t kMaxNodes = 512; // values the tool may parse the response into

    // ---- the tool's side ----
    // Where the tool writes the request's params (one JSON object) before queue().
    std::span<char> params_buffer() { return { m_params, kMaxParams }; }
    // Idle, Answered or Withdrawn -> Queued: params_buffer()[0..params_len) goes out as `method`'s
    // params. False (nothing queued) while a request is outstanding or when method is too long.
    bool queue(std::string_view method, size_t params_len);
    // Queued or Sent -> Withdrawn. False when the answer is already being copied or is there
    // (the tool then waits for Answered, which the bridge reaches in bounded time).
    bool withdraw();
    Outcome outcome() const { return m_outcome; }
    std::string_view response() const { return { m_response, m_response_len }; }
    std::span<json::Node> nodes() { return { m_nodes, kMaxNodes }; }

    // ---- the bridge's side ----
    State state() const { return static_cast<State>(__atomic_load_n(&m_state, __ATOMIC_ACQUIRE)); }
    std::string_view method() const { return { m_method, m_method_len }; }
    std::string_view params() const { return { m_params, m_params_len }; }
    // Queued -> Sent under `id` (a plain string, at most kMaxId - 1 bytes) to session `origin`.
    void sent(std::string_view id, uint32_t origin);
    // Queued -> Answered with Outcome::Unsent.
    void unsent();
    // A response (the result or error member's JSON text) from session `origin`: taken when this
    // exchange is Sent with that id to that session (Sent -> Filling -> Answered). False: not ours.
    bool accept(std::string_view raw_id, bool id_is_string, uint32_t origin, std::string_view body, bool is_error);
    std::string_view id() const { return { m_id, m_id_len }; }

private:
    bool move(State from, State to);
    void set(State to) { __atomic_store_n(&m_state, static_cast<uint8_t>(to), __ATOMIC_RELEASE); }

    uint8_t m_state = static_cast<uint8_t>(State::Idle);
    Outcome m_outcome = Outcome::Result;
    uint8_t m_method_len = 0;
    uint8_t m_id_len = 0;
    uint32_t m_origin = 0;
    uint32_t m_params_len = 0;
    uint32_t m_response_len = 0;
    char m_method[kMaxMethod];
    char m_id[kMaxId];
    char m_params[kMaxParams];
    char m_response[kMaxResponse];
    json::Node m_nodes[kMaxNodes];
};

} // namespace mcp

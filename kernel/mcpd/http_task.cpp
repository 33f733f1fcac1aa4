#include "http_task.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../clock.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../net/endpoint.h"
#include "../net/net_status.h"
#include "../panic.h"
#include <abi/sys.h>
#include "../audit/trail.h"
#include "provenance_log.h"
#include "bridge.h"
#include "bridge_config.h"
#include "console_desk.h"
#include "kernel_resources.h"
#include "sink_gate.h"
#include "tool_exec.h"

#include <ktl/format.h>
#include <ktl/log_ring.h>
#include <http/fields.h>
#include <http/request.h>
#include <mcp/policy/roles.h>
#include <netcfg/ipv4_config.h>
#include <mcp/transport/streamable_http.h>

namespace mcpd {
namespace {

constexpr uint32_t kMaxConns = abi::kMaxStreams;
constexpr size_t kFirstBuffer = 2048;
constexpr uint64_t kSecond = 1'000'000'000ull;
// Against slow and idle clients: a request head must arrive within 10 s of its first byte, a
// body within 30 s; a keep-alive connection with nothing to do is closed after 60 s.
constexpr uint64_t kHeadTimeoutNs = 10 * kSecond;
constexpr uint64_t kBodyTimeoutNs = 30 * kSecond;
constexpr uint64_t kIdleTimeoutNs = 60 * kSecond;
constexpr uint64_t kStreamKeepAliveNs = 15 * kSecond; // SSE comment on a quiet stream
// Against clients that send and never read: past this many unsent bytes a connection's further
// requests wait (nothing more is read from it, so TCP pushes back on the peer). A peer that then
// takes nothing at all is cut by the endpoint (net::Endpoint::kSendTimeoutNs).
constexpr size_t kMaxUnsent = 64 * 1024;
constexpr uint64_t kTickNs = kSecond;           // timeout checks while connections are open
constexpr uint64_t kStreamPollNs = 250'000'000; // how soon a resource update or log record goes out
constexpr size_t kMaxReply = 192 * 1024;
// Tool tasks at once for all HTTP callers together (each principal still has its in-flight cap
// of 10): enough for the 32 concurrent clients the benchmark drives.
constexpr size_t kMaxHttpCalls = 32;

// Request and response bytes held for all connections together: a crowd of clients sending
// 1 MiB bodies at once gets 503s, not the kernel's memory.
constexpr size_t kBufferBudget = 16u << 20;
size_t g_buffered = 0;

// A growable byte buffer on the kernel heap, charged to this task and to the budget above.
struct Buffer {
    char* data = nullptr;
    size_t len = 0;
    size_t cap = 0;
    bool reserve(size_t need) {
        if (need <= cap)
            return true;
        size_t n = cap ? cap : kFirstBuffer;
        while (n < need)
            n *= 2;
        if (g_buffered - cap + n > kBufferBudget)
            return false;
        auto mem = kheap::alloc(n);
        if (!mem)
            return false;
        char* fresh = static_cast<char*>(*mem);
        for (size_t i = 0; i < len; ++i)
            fresh[i] = data[i];
        if (data)
            kheap::free(data);
        g_buffered = g_buffered - cap + n;
        data = fresh;
        cap = n;
        return true;
    }
    void consume(size_t n) {
        for (size_t i = n; i < len; ++i)
            data[i - n] = data[i];
        len -= n;
    }
    void release() {
        if (data)
            kheap::free(data);
        g_buffered -= cap;
        *this = Buffer {};
    }
};

struct Conn {
    // Waiting / Streaming: a deferred call's answer (Streaming once its SSE stream started);
    // Notify: the session's standalone GET stream.
    enum class State : uint8_t { Free, Reading, Waiting, Streaming, Notify, Closing };
    State state = State::Free;
    uint32_t handle = 0;  // the endpoint's: also the reply_to of its deferred calls
    uint32_t session = 0; // Notify: the session's origin
    Buffer in, out;
    size_t sent = 0; // bytes of `out` already taken by the endpoint
    bool keep_alive = true;
    bool peer_closed = false;
    bool continued = false;        // "100 Continue" sent for the current request
    bool ready = false;            // a buffered request waits for this connection's next turn
    uint64_t request_start_ns = 0; // first byte of the request being read (0: none)
    uint64_t last_ns = 0;          // last activity
    uint32_t peer_ip = 0;          // the authentication gate's source
    size_t unsent() const { return out.len - sent; }
};

HttpCaps g_caps;
Executor* g_exec = nullptr; // the bridge's
mcp::HttpTransport* g_transport = nullptr;
mcp::Server* g_server = nullptr;
Conn g_conns[kMaxConns];
char g_reply[kMaxReply];
http::Limits g_limits;

// Host names accepted in Host/Origin: loopback names, and the interface's own address.
char g_own_address[16] = "";
std::string_view g_hosts[40];
size_t g_host_count = 0;

// Session ids come from the kernel's generator (one system call; rng.h).
void random_bytes(uint8_t* out, size_t len) {
    while (len > 0) {
        size_t n = len < 256 ? len : 256;
        if (sys::random_bytes(out, n) != static_cast<int64_t>(n))
            panic("mcp: the kernel's random generator refused %zu bytes", n); // never: the buffer is ours
        out += n;
        len -= n;
    }
}

void build_hosts() {
    g_host_count = 0;
    auto add = [](std::string_view h) {
        if (g_host_count < sizeof g_hosts / sizeof g_hosts[0])
            g_hosts[g_host_count++] = h;
    };
    std::string_view list = bootargs::get().http_hosts;
    if (list.empty()) {
        add("127.0.0.1");
        add("localhost");
        add("[::1]");
        add("::1");
    }
    while (!list.empty()) {
        size_t comma = list.find(',');
        if (comma != 0)
            add(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
    add(std::string_view(g_own_address)); // updated in place when the address changes
}

void refresh_own_address() {
    net::Status st;
    if (!net::read_status(st) || !st.up)
        return;
    size_t n = netcfg::format_ipv4(st.address, g_own_address, sizeof g_own_address);
    g_hosts[g_host_count - 1] = std::string_view(g_own_address, n);
}

Conn* conn_of(uint32_t handle) {
    Conn& c = g_conns[(handle & 0xffff) % kMaxConns];
    return c.state != Conn::State::Free && c.handle == handle ? &c : nullptr;
}

void drop(Conn& c, bool abort) {
    if (c.state == Conn::State::Notify && g_transport)
        g_transport->stream_closed(c.session);
    sys::net_close(g_caps.endpoint, c.handle, abort ? 1 : 0);
    c.in.release();
    c.out.release();
    c = Conn {};
}

bool append(Conn& c, std::string_view bytes) {
    if (!c.out.reserve(c.out.len + bytes.size()))
        return false;
    for (size_t i = 0; i < bytes.size(); ++i)
        c.out.data[c.out.len + i] = bytes[i];
    c.out.len += bytes.size();
    return true;
}

// Frames into the output buffer's tail with `frame(span) -> size`, reserving `need` bytes.
template <typename Frame>
bool append_framed(Conn& c, size_t need, Frame&& frame) {
    if (!c.out.reserve(c.out.len + need))
        return false;
    size_t n = frame(std::span<char>(c.out.data + c.out.len, need));
    c.out.len += n;
    return n > 0;
}

void flush(Conn& c) {
    for (int round = 0; round < 4 && c.sent < c.out.len; ++round) {
        int64_t n = sys::net_send(g_caps.endpoint, c.handle, c.out.data + c.sent, c.out.len - c.sent);
        if (n <= 0) {
            if (n < 0) { // the connection is gone: nothing more can be sent or read on it
                c.state = Conn::State::Closing;
                c.keep_alive = false;
                c.peer_closed = true;
            }
            break;
        }
        c.sent += static_cast<size_t>(n);
        c.last_ns = clock::monotonic_ns();
    }
    if (c.sent == c.out.len) {
        c.out.len = 0;
        c.sent = 0;
        if (c.state == Conn::State::Closing)
            drop(c, false);
    }
}

// After any progress: send what is queued, and end a connection whose peer has closed its side
// once it has the answers it is owed (a call still running keeps it until its answer is sent).
void settle(Conn& c) {
    if (c.peer_closed && c.state == Conn::State::Reading) {
        if (c.out.len == 0) {
            drop(c, false);
            return;
        }
        c.state = Conn::State::Closing;
    }
    flush(c);
}

// Requests answered for one connection per turn. A connection's turn comes with its events and
// in the fair pass of the task's loop; with more requests buffered (a peer pipelining, whose
// host's buffers keep taking the answers) it waits for its next turn, behind one request of each
// other busy connection. With 16 a turn, 80 such peers kept a new client's first request
// unread for 15 s (each answer to tools/list is some 18 KB of JSON to build).
constexpr int kRequestsPerTurn = 1;

void process(mcp::HttpTransport& transport, Conn& c, int& budget) {
    c.ready = false;
    // Pipelined requests wait while the peer has not taken the answers already due.
    for (int guard = 0; guard < 16 && c.state == Conn::State::Reading && c.in.len > 0 && c.unsent() < kMaxUnsent;
         ++guard) {
        http::Head head;
        auto result = http::parse_head({ c.in.data, c.in.len }, g_limits, head);
        if (result.status == http::Parse::NeedMore)
            return;
        if (budget <= 0) {
            c.ready = true; // a whole head is here: answered at the connection's next turn
            return;
        }
        if (result.status == http::Parse::Error) {
            append_framed(c, 1024, [&](std::span<char> o) {
                return transport.error_response(o, result.http_status, result.reason);
            });
            c.state = Conn::State::Closing;
            return;
        }
        size_t total = head.head_bytes + static_cast<size_t>(head.content_length);
        if (c.in.len < total) {
            if (!c.in.reserve(total)) {
                append_framed(c, 1024, [&](std::span<char> o) {
                    return transport.error_response(o, 503, "no memory for the body");
                });
                c.state = Conn::State::Closing;
                return;
            }
            // curl and others wait for this before sending a large body.
            auto expect = head.header("expect");
            if (expect && !c.continued && http::token_equals_ci(*expect, "100-continue")) {
                append(c, "HTTP/1.1 100 Continue\r\n\r\n");
                c.continued = true;
            }
            return;
        }
        --budget;
        auto outcome = transport.handle(head, { c.in.data + head.head_bytes, static_cast<size_t>(head.content_length) },
                                        c.handle, { g_reply, kMaxReply }, c.peer_ip);
        c.keep_alive = head.keep_alive;
        c.continued = false;
        c.in.consume(total);
        c.request_start_ns = c.in.len ? clock::monotonic_ns() : 0;
        if (outcome.kind == mcp::HttpOutcome::Deferred) {
            c.state = Conn::State::Waiting;
            return;
        }
        if (outcome.kind == mcp::HttpOutcome::Stream) {
            append(c, { g_reply, outcome.len });
            c.state = Conn::State::Notify;
            c.session = outcome.session;
            return;
        }
        append(c, { g_reply, outcome.len });
        if (outcome.close || !c.keep_alive)
            c.state = Conn::State::Closing;
    }
}

// One turn of a connection: up to kRequestsPerTurn of its requests answered, what is buffered
// first; more is read from its ring only while no whole request is buffered. Input beyond that
// stays in the endpoint's ring, whose window holds the peer back: read ahead, 80 pipelining peers
// filled the bridge's buffer budget (37 MiB) and a new client could not reserve room to read its
// request.
void receive(mcp::HttpTransport& transport, Conn& c) {
    int budget = kRequestsPerTurn;
    process(transport, c, budget);
    for (int round = 0; round < 64 && budget > 0 && c.state == Conn::State::Reading && !c.ready; ++round) {
        if (c.unsent() >= kMaxUnsent)
            break; // read nothing more until the peer takes its answers: TCP holds its sender
        if (!c.in.reserve(c.in.len + 1024))
            break;
        // Never read past what one request may hold: the parser refuses it anyway.
        size_t room = c.in.cap - c.in.len;
        int64_t n = sys::net_recv(g_caps.endpoint, c.handle, c.in.data + c.in.len, room);
        if (n < 0) {
            c.peer_closed = true;
            break;
        }
        if (n == 0)
            break;
        if (c.in.len == 0 && c.request_start_ns == 0)
            c.request_start_ns = clock::monotonic_ns();
        c.in.len += static_cast<size_t>(n);
        c.last_ns = clock::monotonic_ns();
        if (c.in.len > g_limits.max_header_bytes + g_limits.max_body)
            break;
        process(transport, c, budget);
        if (c.state != Conn::State::Reading)
            break;
    }
    process(transport, c, budget);
    // A turn used up: the ring may hold further requests that no new event will announce (a peer
    // that sent its whole pipeline): the connection gets another turn in the fair pass.
    if (budget <= 0 && c.state == Conn::State::Reading)
        c.ready = true;
}

// The fair pass: every connection with a request waiting for its turn gets one, in slot order
// from where the last pass began. Returns whether any still has one waiting (the loop then polls
// again without sleeping).
bool serve_ready(mcp::HttpTransport& transport) {
    static uint32_t next = 0;
    const uint32_t start = next;
    next = (next + 1) % kMaxConns;
    bool more = false;
    for (uint32_t k = 0; k < kMaxConns; ++k) {
        Conn& c = g_conns[(start + k) % kMaxConns];
        if (c.state != Conn::State::Reading || !c.ready)
            continue;
        if (c.unsent() >= kMaxUnsent) {
            c.ready = false; // its next turn comes when the peer takes answers (an event)
            continue;
        }
        receive(transport, c);
        settle(c);
        more = more || (c.state == Conn::State::Reading && c.ready);
    }
    return more;
}

void on_event(mcp::HttpTransport& transport, const abi::StreamEvent& e) {
    Conn& c = g_conns[(e.handle & 0xffff) % kMaxConns];
    if (e.flags & abi::stream_flags::kNew) {
        if (c.state != Conn::State::Free) // a stale record of the slot's previous connection
            drop(c, true);
        c.state = Conn::State::Reading;
        c.handle = e.handle;
        c.last_ns = clock::monotonic_ns();
        c.peer_ip = e.peer_ip;
    }
    if (c.state == Conn::State::Free || c.handle != e.handle)
        return;
    if (e.flags & abi::stream_flags::kReset) {
        drop(c, true);
        return;
    }
    if (e.readable)
        receive(transport, c);
    if (e.flags & abi::stream_flags::kPeerClosed)
        c.peer_closed = true;
    settle(c);
    // The peer took answers: requests that waited behind them (buffered, or still in the
    // endpoint's ring) go on now, not at some later event that may never come.
    if (c.state == Conn::State::Reading && c.unsent() < kMaxUnsent && (c.in.len > 0 || e.readable)) {
        receive(transport, c);
        settle(c);
    }
}

// The console's decisions on proposals (console_desk.h): a session of the console's principal in
// this bridge, its deferred answers addressed to no connection.
constexpr uint32_t kConsoleReply = ~0u;
constexpr uint32_t kConsoleOrigin =
    0x40000000u; // apart from sessions' (slot | generation << 8) and stateless (high bit)
mcp::Principal g_console;
mcp::Session g_console_session;
struct ConsoleTurn {
    console_desk::Verb verb = console_desk::Verb::Approve;
    uint32_t id = 0;
    bool was_pending = false; // the proposal before the decision
    uint32_t serial = 0;      // request ids console-1, console-2, ...
} g_turn;

// The error message of a refused or failed call's answer: the envelope's, else JSON-RPC's.
std::string_view failure_of(const json::Value& root) {
    json::Value envelope = root.find("result").find("_meta").find("io.basalt/error");
    if (!envelope.valid())
        envelope = root.find("error").find("data");
    if (auto m = envelope.find("error").find("message").plain_string())
        return *m;
    return root.find("error").find("message").plain_string().value_or("");
}

// One line for the console: what the decision did, from the answer and the proposal's new state.
void console_answer(std::string_view reply) {
    static json::Node nodes[256];
    auto doc = json::Document::parse(reply, nodes);
    const bool failed = !doc || doc->root().find("error").valid() ||
                        doc->root().find("result").find("isError").as_bool().value_or(false);
    std::string_view why = doc ? failure_of(doc->root()) : std::string_view("its answer could not be read");
    ProposalLine p;
    mcp::ProposalState state = mcp::ProposalState::Pending;
    const bool known = proposal_line(g_turn.id, p, state);
    const bool approve = g_turn.verb == console_desk::Verb::Approve;
    // Decided now, by this call: pending before, approved or rejected after.
    const bool decided = known && g_turn.was_pending &&
                         state == (approve ? mcp::ProposalState::Approved : mcp::ProposalState::Rejected);
    char line[240];
    ktl::Formatter f(line, sizeof line);
    if (decided && approve && !failed)
        f.append("proposal %u approved at the console: %s '%s' ran", g_turn.id, p.tool, p.target);
    else if (decided && approve)
        f.append("proposal %u approved at the console, but %s '%s' failed: %.*s", g_turn.id, p.tool, p.target,
                 static_cast<int>(why.size()), why.data());
    else if (decided)
        f.append("proposal %u rejected at the console: %s '%s' will never run", g_turn.id, p.tool, p.target);
    else
        f.append("proposal %u not %s: %.*s", g_turn.id, approve ? "approved" : "rejected", static_cast<int>(why.size()),
                 why.data());
    console_desk::answer({ line, f.length() });
}

// Takes the console's decision, if one waits, through the dispatcher as the console's own
// tools/call: authorised, limited, audited and run exactly as an MCP client's would be.
void console_turn(mcp::Server& server) {
    console_desk::Verb verb;
    uint32_t id;
    if (!console_desk::take(verb, id))
        return;
    if (!g_console_session.initialized) {
        static constexpr std::string_view kHello[] = {
            R"({"jsonrpc":"2.0","id":"console-0","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"console","version":"1"}}})",
            R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
        };
        for (auto m : kHello)
            (void)server.handle(m, g_console_session, { g_reply, kMaxReply });
    }
    g_turn.verb = verb;
    g_turn.id = id;
    ProposalLine before;
    mcp::ProposalState state = mcp::ProposalState::Expired;
    g_turn.was_pending = proposal_line(id, before, state) && state == mcp::ProposalState::Pending;
    char request[200];
    ktl::Formatter f(request, sizeof request);
    f.append(
        R"({"jsonrpc":"2.0","id":"console-%u","method":"tools/call","params":{"name":"%s","arguments":{"proposal_id":%u}}})",
        ++g_turn.serial, verb == console_desk::Verb::Approve ? "proposal_approve" : "proposal_reject", id);
    size_t n = server.handle({ request, f.length() }, g_console_session, { g_reply, kMaxReply });
    if (n > 0) // answered at once (refused before any task ran); else deliver() brings the answer
        console_answer({ g_reply, n });
}

// Output of a deferred call for its connection.
void deliver(void*, const mcp::PendingCall& call, size_t len, bool final) {
    if (call.reply_to == kConsoleReply) {
        if (final)
            console_answer({ g_reply, len });
        return; // progress and log notifications: the console has its own log
    }
    Conn* c = conn_of(call.reply_to);
    if (!c || (c->state != Conn::State::Waiting && c->state != Conn::State::Streaming))
        return; // the client went away: nothing to deliver to
    std::string_view msg(g_reply, len);
    if (!final) {
        if (c->state == Conn::State::Waiting) {
            append_framed(*c, 512, [&](std::span<char> o) { return mcp::HttpTransport::sse_head(o, c->keep_alive); });
            c->state = Conn::State::Streaming;
        }
        append_framed(*c, len + 64, [&](std::span<char> o) { return mcp::HttpTransport::sse_event(o, msg); });
    } else if (c->state == Conn::State::Streaming) {
        if (len > 0)
            append_framed(*c, len + 64, [&](std::span<char> o) { return mcp::HttpTransport::sse_event(o, msg); });
        append_framed(*c, 8, [&](std::span<char> o) { return mcp::HttpTransport::sse_end(o); });
        c->state = Conn::State::Reading;
    } else if (len > 0) {
        append_framed(*c, len + 512,
                      [&](std::span<char> o) { return mcp::HttpTransport::json_response(o, msg, c->keep_alive); });
        c->state = Conn::State::Reading;
    } else {
        c->state = Conn::State::Closing; // cancelled: no answer (MCP "Cancellation"); end the exchange
    }
    c->last_ns = clock::monotonic_ns();
    if (c->state == Conn::State::Reading && !c->keep_alive)
        c->state = Conn::State::Closing;
}

void check_timeouts(mcp::HttpTransport& transport, uint64_t now) {
    for (auto& c : g_conns) {
        if (c.state == Conn::State::Reading && c.request_start_ns) {
            http::Head head;
            bool have_head = c.in.len &&
                             http::parse_head({ c.in.data, c.in.len }, g_limits, head).status == http::Parse::Complete;
            if (now - c.request_start_ns > (have_head ? kBodyTimeoutNs : kHeadTimeoutNs)) {
                append_framed(c, 1024,
                              [&](std::span<char> o) { return transport.error_response(o, 408, "request too slow"); });
                c.state = Conn::State::Closing;
                flush(c);
            }
        } else if (c.state == Conn::State::Reading && c.out.len == 0 && now - c.last_ns > kIdleTimeoutNs) {
            drop(c, false);
        } else if ((c.state == Conn::State::Streaming || c.state == Conn::State::Notify) &&
                   now - c.last_ns > kStreamKeepAliveNs) {
            append_framed(c, 64, [](std::span<char> o) { return mcp::HttpTransport::sse_comment(o); });
            c.last_ns = now;
            flush(c);
        } else if (c.state == Conn::State::Closing && now - c.last_ns > kIdleTimeoutNs) {
            drop(c, true); // a peer that never reads its answer
        }
    }
}

// The standalone streams: resource updates of each session, and kernel log records for sessions
// that asked for them (logging/setLevel).
void pump_streams(mcp::HttpTransport& transport, uint64_t& log_next) {
    static ktl::LogRecord rec;
    bool any_logging = false;
    for (auto& c : g_conns) {
        if (c.state != Conn::State::Notify)
            continue;
        for (int i = 0; i < 8; ++i) {
            bool gone = false;
            size_t n = transport.next_notification(c.session, { g_reply, kMaxReply }, &gone);
            if (gone) {
                append_framed(c, 8, [](std::span<char> o) { return mcp::HttpTransport::sse_end(o); });
                transport.stream_closed(c.session);
                c.state = Conn::State::Closing;
                break;
            }
            if (n == 0)
                break;
            append(c, { g_reply, n });
            c.last_ns = clock::monotonic_ns();
        }
        if (c.state == Conn::State::Notify)
            if (auto* s = transport.session(c.session); s && s->logging)
                any_logging = true;
        flush(c);
    }
    if (!any_logging) {
        log_next = klog::next_seq(); // only what happens while someone listens is forwarded
        return;
    }
    for (int guard = 0; guard < 64; ++guard) {
        int64_t after = sys::log_read(g_caps.bridge.introspection, log_next, &rec);
        if (after < 0)
            break;
        log_next = static_cast<uint64_t>(after);
        // The kernel's levels are the first six of RFC 5424's, in the same order as MCP's.
        auto level = static_cast<mcp::LogLevel>(rec.level);
        for (auto& c : g_conns) {
            auto* s = c.state == Conn::State::Notify ? transport.session(c.session) : nullptr;
            if (!s)
                continue;
            static char msg[2048];
            size_t n = g_server->log_message(*s, level, "kernel", { rec.text, rec.length }, { msg, sizeof msg });
            if (n > 0)
                append_framed(c, n + 64, [&](std::span<char> o) {
                    return mcp::HttpTransport::sse_event(o, { msg, n });
                });
            flush(c);
        }
    }
}

bool any_streams() {
    for (const auto& c : g_conns)
        if (c.state == Conn::State::Notify)
            return true;
    return false;
}

bool any_open() {
    for (const auto& c : g_conns)
        if (c.state != Conn::State::Free)
            return true;
    return false;
}

} // namespace

int64_t http_task_main(void* arg) {
    g_caps = *static_cast<const HttpCaps*>(arg);
    // The store is the storage task's until it has replayed the disk's log: nothing is served
    // before (a client's first call simply waits).
    sys::storage_wait();
    build_hosts();

    // Callers without a key act as `http_role` (default anonymous: the network is not trusted
    // the way the console is).
    static mcp::Principal guest;
    const mcp::Principal* fallback = line_principal(guest, "http", bootargs::get().http_role, mcp::Role::Anonymous,
                                                    mcp::CallLimiter::kMaxPrincipals - 2);
    // Subscriptions are delivered on the session's standalone stream (pump_streams).
    static Bridge bridge({ g_caps.bridge, "http", "mcp: http: ", g_caps.signal, kMaxHttpCalls, fallback });
    bridge.resume_audit(); // the store has replayed the disk's log: the trail continues after it
    g_exec = &bridge.executor();
    mcp::Server& server = bridge.server();
    static mcp::HttpConfig http_config;
    http_config.allowed_hosts = std::span<const std::string_view>(g_hosts, g_host_count);
    http_config.default_principal = fallback;
    http_config.now_ns = clock::monotonic_ns;
    http_config.random = random_bytes;
    http_config.now_rfc3339 = clock::rfc3339_now;
    http_config.audit = audit_decision;
    static mcp::HttpTransport transport(server, http_config);
    g_transport = &transport;
    g_server = &server;
    KLOG_INFO("mcp: http: serving /mcp on port %u as '%s' for callers without a key", net::http_endpoint().port(),
              mcp::role_name(guest.role));
    // The console shell's decisions on proposals, when the console is the shell's (not the MCP
    // line, whose own bridge has this principal): taken as the `console` principal, the role the
    // serial line is given (default admin: whoever holds the console owns the appliance).
    if (!bootargs::get().mcp_serial) {
        g_console_session.principal = line_principal(g_console, "console", bootargs::get().serial_role,
                                                     mcp::Role::Admin, mcp::CallLimiter::kMaxPrincipals - 1);
        g_console_session.origin = kConsoleOrigin;
        g_console_session.reply_to = kConsoleReply;
        g_console_session.source = 1; // the console: one source for the authentication gate, as the serial line's
        g_console_session.transport = "console";
        console_desk::open(g_caps.signal);
    }

    constexpr uint64_t kYieldToToolsNs = 500'000, kOverdueNs = 200'000'000;
    static abi::StreamEvent events[64];
    uint64_t last_tick = clock::monotonic_ns();
    uint64_t log_next = klog::next_seq();
    bool ready = false; // connections have requests waiting for their turn: no sleeping
    for (;;) {
        bool busy = g_exec->in_flight();
        bool streams = any_streams();
        uint64_t timeout = busy ? 10'000'000 : streams ? kStreamPollNs : any_open() ? kTickNs : 0;
        if (!ready)
            sys::event_wait(g_caps.wake, timeout);
        else if (busy && g_exec->overdue(clock::monotonic_ns(), kOverdueNs))
            // Requests keep coming (a flood of refused callers): the bridge would never wait, and
            // the calls it admitted, whose tools run a priority below it, would starve past their
            // wall-time limit. Once one has waited long, a short wait lets them run (not sooner:
            // concurrent callers' calls end quickly, and each wait costs them throughput).
            sys::sleep(kYieldToToolsNs);
        refresh_own_address();
        console_turn(server);
        for (int round = 0; round < 8; ++round) {
            int64_t n = sys::net_poll(g_caps.endpoint, events, 64);
            for (int64_t i = 0; i < n; ++i)
                on_event(transport, events[i]);
            if (n < 64)
                break;
        }
        ready = serve_ready(transport);
        if (g_exec->in_flight() || busy) {
            g_exec->poll(server, { g_reply, kMaxReply }, deliver, nullptr);
            for (auto& c : g_conns)
                if (c.state != Conn::State::Free) {
                    if (c.state == Conn::State::Reading)
                        receive(transport, c); // requests that waited behind an answered call
                    settle(c);
                }
        }
        if (streams || any_streams())
            pump_streams(transport, log_next);
        uint64_t now = clock::monotonic_ns();
        if (now - last_tick >= kTickNs) {
            last_tick = now;
            check_timeouts(transport, now);
            transport.expire_idle();
        }
    }
}

} // namespace mcpd

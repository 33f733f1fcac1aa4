#include "serial_task.h"

#include "../bootargs.h"
#include "../log.h"
#include <abi/sys.h>
#include <abi/version.h>
#include "../audit/trail.h"
#include "provenance_log.h"
#include "bridge.h"
#include "bridge_config.h"
#include "tools/profile.h"
#include "kernel_resources.h"
#include "tool_exec.h"

#include <ktl/log_ring.h>
#include <mcp/fixtures/conformance.h>
#include <mcp/policy/key_store.h>
#include <mcp/policy/roles.h>
#include <mcp/schema/validator.h>
#include <mcp/transport/line_framer.h>

namespace mcpd {

namespace {

constexpr size_t kMaxLine = 1u << 20; // the default maximum message
constexpr size_t kMaxReply = 192 * 1024;
constexpr uint64_t kLogPollNs = 100'000'000;    // how soon a log record reaches a client that asked for it
constexpr uint64_t kCallPollNs = 10'000'000;    // progress and completion checks while tools run
constexpr uint64_t kUpdatePollNs = 250'000'000; // how soon a subscriber hears that a resource changed

char g_line[kMaxLine];
char g_reply[kMaxReply + 1];
uint32_t g_log_slot = ~0u;    // the bridge's introspection capability (log forwarding)
uint32_t g_serial_slot = ~0u; // the line

void send(uint32_t serial, size_t len) {
    g_reply[len] = '\n';
    sys::serial_write(serial, g_reply, len + 1);
}

// Sends the log records that arrived since `next` as notifications/message (MCP "Logging").
uint64_t forward_log(mcp::Server& server, const mcp::Session& session, uint32_t serial, uint64_t next) {
    static ktl::LogRecord rec;
    for (int guard = 0; guard < 64; ++guard) {
        int64_t after = sys::log_read(g_log_slot, next, &rec);
        if (after < 0)
            break;
        next = static_cast<uint64_t>(after);
        // The kernel's levels are the first six of RFC 5424's, in the same order as MCP's.
        auto level = static_cast<mcp::LogLevel>(rec.level);
        size_t n = server.log_message(session, level, "kernel", { rec.text, rec.length }, { g_reply, kMaxReply });
        if (n > 0)
            send(serial, n);
    }
    return next;
}

// Whether a line may be answered while the storage task still replays the disk's log (tens of
// ms for an empty image, longer with data): a client's discovery or handshake must not wait for
// it (the Vercel AI SDK gives server/discover 1 s before it falls back to the 2025 handshake).
// These methods are answered from the boot configuration alone and never write the audit trail,
// which continues only after what the disk gives back; a request presenting an API key waits, as
// a refused key is audited.
bool answerable_before_storage(std::string_view line) {
    static constexpr std::string_view kEarly[] = {
        "server/discover", "initialize", "notifications/initialized", "ping", "tools/list", "resources/list"
    };
    static json::Node nodes[64]; // a handshake's values; a larger message simply waits
    auto doc = json::Document::parse(line, { nodes, sizeof nodes / sizeof nodes[0] });
    if (!doc)
        return false;
    json::Value root = doc->root();
    json::Value method = root.find("method");
    bool early = false;
    for (std::string_view m : kEarly)
        early = early || method.string_equals(m);
    return early && !root.find("params").find("_meta").find(mcp::Server::kApiKeyMeta).valid();
}

} // namespace

int64_t serial_task_main(void* arg) {
    const auto& caps = *static_cast<const SerialCaps*>(arg);
    g_log_slot = caps.bridge.introspection;
    g_serial_slot = caps.serial;

    // The serial line's principal comes from the boot configuration. Default admin: whoever
    // holds the console (the QEMU process's stdio, or the board's UART pins) owns the appliance.
    static mcp::Principal console;
    static mcp::Session session;
    session.source = 1; // the serial line: one source for the authentication gate
    session.principal = line_principal(console, "console", bootargs::get().serial_role, mcp::Role::Admin,
                                       mcp::CallLimiter::kMaxPrincipals - 1);
    static Bridge bridge({ caps.bridge, "serial", "mcp: ", caps.wake, kMaxCalls, session.principal });
    mcp::Server& server = bridge.server();
    Executor& exec = bridge.executor();
    const mcp::ServerConfig& config = bridge.config();
    // The store is the storage task's until it has replayed the disk's log: until then only what
    // answerable_before_storage() allows is served, and the first other line waits here.
    bool storage_ready = false;
    auto wait_for_storage = [&] {
        if (storage_ready)
            return;
        sys::storage_wait();
        bridge.resume_audit(); // the trail continues after what the disk gave back
        storage_ready = true;
    };

    mcp::LineFramer framer({ g_line, kMaxLine });
    KLOG_INFO("mcp: serving on the serial line as '%s' (%s), %zu tools and %zu resources allowed, %zu keys",
              console.name, mcp::role_name(console.role), config.allowlist.size(), config.resource_allowlist.size(),
              api_keys().size());
    uint64_t log_next = klog::next_seq(); // only what happens from now on is forwarded
    static uint8_t buf[16384];
    for (;;) {
        // Line mode: one wake-up per message (or per 16 KiB of a long one), not per byte. While
        // the client wants log messages, wake up now and then to forward new records; a timed
        // read returns whatever arrived (line mode cannot time out without losing a partial line).
        bool busy = exec.in_flight();
        // Log records go out while the session asked for them (logging/setLevel, 2025 revisions)
        // or while a call that opted in per request (2026-07-28 logLevel) runs.
        mcp::Session logs = session;
        if (int floor = exec.log_floor(); floor >= 0) {
            auto level = static_cast<mcp::LogLevel>(floor);
            logs.log_level = logs.logging && logs.log_level < level ? logs.log_level : level;
            logs.logging = true;
        }
        uint64_t timeout = busy                         ? kCallPollNs
                           : logs.logging               ? kLogPollNs
                           : session.subscription_count ? kUpdatePollNs
                                                        : 0;
        bool timed = timeout != 0;
        int64_t got = sys::serial_read(caps.serial, buf, sizeof buf, timeout, timed ? 0 : 1);
        // Records first: what a call logged goes out before its result.
        if (logs.logging)
            log_next = forward_log(server, logs, caps.serial, log_next);
        else
            log_next = klog::next_seq();
        if (busy)
            exec.poll(
                server, { g_reply, kMaxReply },
                [](void*, const mcp::PendingCall&, size_t n, bool) {
                if (n > 0)
                    send(g_serial_slot, n);
                },
                nullptr);
        for (size_t i = 0; i < mcp::Session::kMaxSubscriptions; ++i) { // subscribed resources that changed
            size_t n = server.next_resource_update(session, { g_reply, kMaxReply });
            if (n == 0)
                break;
            send(caps.serial, n);
        }
        if (got < 0 && got != -static_cast<int64_t>(ktl::Error::TimedOut)) {
            KLOG_ERROR("mcp: serial read failed: %s", ktl::error_name(static_cast<ktl::Error>(-got)));
            sys::sleep_ns(10'000'000); // never spin on a failing line
            continue;
        }
        if (got <= 0)
            continue;
        framer.feed({ buf, static_cast<size_t>(got) }, [&](const mcp::FrameEvent& e) {
            if (!storage_ready && (e.kind != mcp::FrameEvent::Line || !answerable_before_storage(e.line)))
                wait_for_storage();
            size_t n = e.kind == mcp::FrameEvent::Line ? server.handle(e.line, session, { g_reply, kMaxReply })
                                                       : server.oversized(e.discarded, { g_reply, kMaxReply });
            if (n > 0)
                send(caps.serial, n);
        });
    }
}

} // namespace mcpd

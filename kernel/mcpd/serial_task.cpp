#include "serial_task.h"

#include "../bootargs.h"
#include "../clock.h"
#include "../log.h"
#include "../syscall/sys.h"
#include "../version.h"
#include "audit_trail.h"
#include "fixture_tools.h"
#include "kernel_resources.h"
#include "kernel_tools.h"
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
constexpr size_t kMaxAllow = 32;
constexpr uint64_t kLogPollNs = 100'000'000; // how soon a log record reaches a client that asked for it
constexpr uint64_t kCallPollNs = 10'000'000; // progress and completion checks while tools run
constexpr uint64_t kUpdatePollNs = 250'000'000; // how soon a subscriber hears that a resource changed

char g_line[kMaxLine];
char g_reply[kMaxReply + 1];
std::string_view g_allow[kMaxAllow];
std::string_view g_resource_allow[kMaxAllow];
std::string_view g_prompt_allow[kMaxAllow];
mcp::KeyStore g_keys;
uint32_t g_log_slot = ~0u;    // the bridge's introspection capability (log forwarding)
uint32_t g_serial_slot = ~0u; // the line

void now_rfc3339(char* out, size_t cap) { clock::rfc3339_now(out, cap); }
uint64_t now_ns() { return clock::monotonic_ns(); }

size_t split_list(std::string_view list, std::string_view* out) {
    size_t n = 0;
    while (!list.empty() && n < kMaxAllow) {
        size_t comma = list.find(',');
        std::string_view name = list.substr(0, comma);
        if (!name.empty())
            out[n++] = name;
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
    return n;
}

// A tool whose input schema is not fully bounded (contracts "Bounds") is never served.
bool schema_bounded(const mcp::Tool& tool) {
    static json::Node nodes[512];
    auto doc = json::Document::parse(tool.input_schema, nodes);
    mcp::schema::Failure f;
    if (doc && mcp::schema::check_bounded(doc->root(), f))
        return true;
    KLOG_ERROR("mcp: tool %s withheld: its input schema is not bounded (%s at '%s')", tool.name,
               doc ? f.keyword : "unparsable", f.path);
    return false;
}

// A configured `a,b` list or, by default, the name of every item.
template <typename Items, typename NameOf>
size_t allowlist(std::string_view configured, const Items& items, NameOf name_of, std::string_view* out) {
    if (!configured.empty())
        return split_list(configured, out);
    size_t n = 0;
    for (const auto& item : items)
        if (n < kMaxAllow)
            out[n++] = name_of(item);
    return n;
}

// `tools=a,b` or, by default, every tool (kernel and vector; in the conformance profile the
// suite's fixtures instead); either way only tools with bounded schemas. Scopes still decide who
// may call what (reader: no vector writes, only admin creates).
size_t build_allowlist() {
    auto defaults = conformance_profile() ? mcp::fixtures::tools() : all_tools();
    size_t n = allowlist(bootargs::get().tools, defaults, [](const mcp::Tool& t) { return t.name; }, g_allow);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
        bool ok = true;
        for (const auto& t : all_tools())
            if (g_allow[i] == t.name)
                ok = schema_bounded(t);
        if (ok)
            g_allow[kept++] = g_allow[i];
    }
    return kept;
}

// `resources=uri,uri` or, by default, every kernel resource (in the conformance profile: the
// fixtures' resources and template).
size_t build_resource_allowlist() {
    auto uri = [](const mcp::Resource& r) { return r.uri; };
    if (!conformance_profile())
        return allowlist(bootargs::get().resources, kernel_resources(), uri, g_resource_allow);
    size_t n = allowlist(bootargs::get().resources, mcp::fixtures::resources(), uri, g_resource_allow);
    if (bootargs::get().resources.empty())
        n += allowlist({}, mcp::fixtures::resource_templates(), [](const mcp::ResourceTemplate& t) { return t.uri_template; },
                       g_resource_allow + n);
    return n;
}

void add_key(std::string_view spec, void*) {
    // The secret is never logged: only the outcome and, on success, who it stands for.
    auto id = g_keys.add_spec(spec);
    if (!id)
        KLOG_WARN("mcp: a key= boot argument was refused (%s); expected ROLE:SECRET or ROLE:PRINCIPAL:SECRET, secret 16..256 bytes",
                  ktl::error_name(id.error()));
    else if (const auto* p = g_keys.by_id(*id))
        KLOG_INFO("mcp: API key for principal '%s' (%s) installed", p->name, mcp::role_name(p->role));
}

// Refusals also go to the kernel log (and so to a client that asked for log messages). The name
// comes from the request: cut at a UTF-8 boundary so the record stays valid text.
void audit_hook(const mcp::AuditEvent& e) {
    audit_trail_record(e);
    if (e.outcome == mcp::AuditOutcome::Allow)
        return;
    size_t n = e.name.size() < 48 ? e.name.size() : 48;
    while (n > 0 && n < e.name.size() && (static_cast<unsigned char>(e.name[n]) & 0xc0) == 0x80)
        --n;
    KLOG_NOTICE("mcp: %s %s '%.*s' for %s: %s", mcp::audit_outcome_name(e.outcome), mcp::audit_kind_name(e.kind),
                static_cast<int>(n), e.name.data(), e.principal ? e.principal->name : "anonymous", e.code);
}

void send(uint32_t serial, size_t len) {
    g_reply[len] = '\n';
    sys::call(sys::Number::serial_write, serial, reinterpret_cast<uint64_t>(g_reply), len + 1);
}

// Sends the log records that arrived since `next` as notifications/message (MCP "Logging").
uint64_t forward_log(mcp::Server& server, const mcp::Session& session, uint32_t serial, uint64_t next) {
    static ktl::LogRecord rec;
    for (int guard = 0; guard < 64; ++guard) {
        int64_t after = sys::call(sys::Number::log_read, g_log_slot, next, reinterpret_cast<uint64_t>(&rec));
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

} // namespace

int64_t serial_task_main(void* arg) {
    const auto& caps = *static_cast<const SerialCaps*>(arg);
    g_log_slot = caps.introspection;
    g_serial_slot = caps.serial;
    set_exec_caps({ caps.factory, caps.introspection, caps.store }, uint64_t(bootargs::get().tool_time_ms) * 1000000,
                  bootargs::get().tool_output_bytes, caps.wake);

    // The serial line's principal comes from the boot configuration. Default admin: whoever
    // holds the console (the QEMU process's stdio, or the board's UART pins) owns the appliance.
    static mcp::Principal console;
    const char name[] = "console";
    for (size_t i = 0; i < sizeof name; ++i)
        console.name[i] = name[i];
    console.id = mcp::CallLimiter::kMaxPrincipals - 1;
    console.role = mcp::parse_role(bootargs::get().serial_role).value_or(mcp::Role::Admin);
    console.scopes = mcp::scopes_of(console.role);

    bootargs::for_each_key(add_key, nullptr);
    if (!audit_trail_init(caps.factory))
        KLOG_ERROR("mcp: no audit region; decisions are counted as dropped");

    static mcp::ServerConfig config;
    config.version = kVersion;
    config.source_commit = kSourceCommit;
    config.tools = all_tools();
    config.allowlist = std::span<const std::string_view>(g_allow, build_allowlist());
    config.resources = kernel_resources();
    config.resource_allowlist = std::span<const std::string_view>(g_resource_allow, build_resource_allowlist());
    if (conformance_profile()) {
        // The suite's fixtures, reachable by every caller (it sends no credentials); the kernel's
        // resources are not served, and one list page holds every fixture.
        config.resources = mcp::fixtures::resources();
        config.resource_templates = mcp::fixtures::resource_templates();
        config.prompts = mcp::fixtures::prompts();
        config.prompt_allowlist = std::span<const std::string_view>(
            g_prompt_allow, allowlist(bootargs::get().prompts, config.prompts, [](const mcp::Prompt& p) { return p.name; },
                                      g_prompt_allow));
        config.anonymous_scopes = mcp::kConformanceFixtures;
        config.page_size = 32;
        KLOG_WARN("mcp: profile=conformance: test fixtures served to every caller");
    }
    config.subscriptions = true; // delivered below
    config.keys = &g_keys;
    config.transport = "serial";
    config.audit = audit_hook;
    config.start_call = start_call;
    config.cancel_call = cancel_call;
    config.now_rfc3339 = now_rfc3339;
    config.now_ns = now_ns;
    static mcp::CallLimiter limiter(mcp::LimitConfig { 50, 20, 10 });
    static mcp::Server server(config, limiter);
    static mcp::Session session;
    session.principal = console.role == mcp::Role::Anonymous ? nullptr : &console;
    set_resource_context({ caps.introspection, caps.audit, session.principal, config.allowlist.size() });

    mcp::LineFramer framer({ g_line, kMaxLine });
    KLOG_INFO("mcp: serving on the serial line as '%s' (%s), %zu tools and %zu resources allowed, %zu keys", console.name,
              mcp::role_name(console.role), config.allowlist.size(), config.resource_allowlist.size(), g_keys.size());
    uint64_t log_next = klog::next_seq(); // only what happens from now on is forwarded
    static uint8_t buf[16384];
    for (;;) {
        // Line mode: one wake-up per message (or per 16 KiB of a long one), not per byte. While
        // the client wants log messages, wake up now and then to forward new records; a timed
        // read returns whatever arrived (line mode cannot time out without losing a partial line).
        bool busy = calls_in_flight();
        // Log records go out while the session asked for them (logging/setLevel, 2025 revisions)
        // or while a call that opted in per request (2026-07-28 logLevel) runs.
        mcp::Session logs = session;
        if (int floor = calls_log_floor(); floor >= 0) {
            auto level = static_cast<mcp::LogLevel>(floor);
            logs.log_level = logs.logging && logs.log_level < level ? logs.log_level : level;
            logs.logging = true;
        }
        uint64_t timeout = busy ? kCallPollNs : logs.logging ? kLogPollNs : session.subscription_count ? kUpdatePollNs : 0;
        bool timed = timeout != 0;
        int64_t got = sys::call(sys::Number::serial_read, caps.serial, reinterpret_cast<uint64_t>(buf), sizeof buf, timeout,
                                timed ? 0 : 1);
        // Records first: what a call logged goes out before its result.
        if (logs.logging)
            log_next = forward_log(server, logs, caps.serial, log_next);
        else
            log_next = klog::next_seq();
        if (busy)
            poll_calls(server, { g_reply, kMaxReply }, [](size_t n) { send(g_serial_slot, n); });
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
            size_t n = e.kind == mcp::FrameEvent::Line ? server.handle(e.line, session, { g_reply, kMaxReply })
                                                       : server.oversized(e.discarded, { g_reply, kMaxReply });
            if (n > 0)
                send(caps.serial, n);
        });
    }
}

} // namespace mcpd

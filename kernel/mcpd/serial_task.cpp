#include "serial_task.h"

#include "../bootargs.h"
#include "../clock.h"
#include "../log.h"
#include "../syscall/sys.h"
#include "../version.h"
#include "kernel_tools.h"

#include <mcp/policy/roles.h>
#include <mcp/transport/line_framer.h>

namespace mcpd {

extern uint32_t g_introspection_slot;

namespace {

constexpr size_t kMaxLine = 1u << 20; // the default maximum message
constexpr size_t kMaxReply = 192 * 1024;
constexpr size_t kMaxAllow = 32;

char g_line[kMaxLine];
char g_reply[kMaxReply + 1];
std::string_view g_allow[kMaxAllow];

void now_rfc3339(char* out, size_t cap) { clock::rfc3339_now(out, cap); }
uint64_t now_ns() { return clock::monotonic_ns(); }

// `tools=a,b` or, by default, every kernel tool.
size_t build_allowlist() {
    std::string_view list = bootargs::get().tools;
    size_t n = 0;
    if (list.empty()) {
        for (const auto& t : kernel_tools())
            if (n < kMaxAllow)
                g_allow[n++] = t.name;
        return n;
    }
    while (!list.empty() && n < kMaxAllow) {
        size_t comma = list.find(',');
        std::string_view name = list.substr(0, comma);
        if (!name.empty())
            g_allow[n++] = name;
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
    return n;
}

void send(uint32_t serial, size_t len) {
    g_reply[len] = '\n';
    sys::call(sys::Number::serial_write, serial, reinterpret_cast<uint64_t>(g_reply), len + 1);
}

} // namespace

int64_t serial_task_main(void* arg) {
    const auto& caps = *static_cast<const SerialCaps*>(arg);
    g_introspection_slot = caps.introspection;

    // The serial line's principal comes from the boot configuration. Default admin: whoever
    // holds the console (the QEMU process's stdio, or the board's UART pins) owns the appliance.
    static mcp::Principal console;
    const char name[] = "console";
    for (size_t i = 0; i < sizeof name; ++i)
        console.name[i] = name[i];
    console.id = mcp::CallLimiter::kMaxPrincipals - 1;
    console.role = mcp::parse_role(bootargs::get().serial_role).value_or(mcp::Role::Admin);
    console.scopes = mcp::scopes_of(console.role);

    static mcp::ServerConfig config;
    config.version = kVersion;
    config.source_commit = kSourceCommit;
    config.tools = kernel_tools();
    config.allowlist = std::span<const std::string_view>(g_allow, build_allowlist());
    config.now_rfc3339 = now_rfc3339;
    config.now_ns = now_ns;
    static mcp::CallLimiter limiter(mcp::LimitConfig { 50, 20, 10 });
    static mcp::Server server(config, limiter);
    mcp::Session session;
    session.principal = console.role == mcp::Role::Anonymous ? nullptr : &console;

    mcp::LineFramer framer({ g_line, kMaxLine });
    KLOG_INFO("mcp: serving on the serial line as '%s' (%s), %zu tools allowed", console.name,
              mcp::role_name(console.role), config.allowlist.size());
    static uint8_t buf[16384];
    for (;;) {
        // Line mode: one wake-up per message (or per 16 KiB of a long one), not per byte.
        int64_t got = sys::call(sys::Number::serial_read, caps.serial, reinterpret_cast<uint64_t>(buf), sizeof buf, 0, 1);
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

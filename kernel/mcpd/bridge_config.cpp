#include "bridge_config.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../log.h"
#include "../mm/kheap.h"
#include <abi/sys.h>
#include <abi/version.h>
#include "../audit/trail.h"
#include "tools/profile.h"
#include "kernel_resources.h"
#include "provenance_log.h"
#include "tool_exec.h"

#include <mcp/fixtures/conformance.h>
#include <mcp/policy/roles.h>
#include <mcp/policy/sink_policy.h>
#include <mcp/schema/validator.h>

#include <cstdarg>
#include <iterator>

#include <ktl/format.h>
#include <ktl/utf8.h>

namespace mcpd {
namespace {

constexpr size_t kMaxAllow = 32;

std::string_view g_allow[kMaxAllow];
std::string_view g_resource_allow[kMaxAllow];
std::string_view g_prompt_allow[kMaxAllow];
size_t g_allow_count = 0;
size_t g_resource_allow_count = 0;
size_t g_prompt_allow_count = 0;
mcp::KeyStore g_keys;

// `limit=` overrides for the principals of the lines themselves (no key names them).
struct LineLimits {
    std::string_view name;
    mcp::PrincipalLimits limits;
};
constexpr std::string_view kLineNames[] = { "console", "http" };
LineLimits g_line_limits[std::size(kLineNames)];
size_t g_line_limit_count = 0;

// Boot-configuration warnings (refused keys and limits, overrides with no effect): logged, and
// kept for kernel://status so a client sees them too (contracts: an override that cannot be
// parsed is ignored "with a warning in the response").
constexpr size_t kMaxWarnings = 8;
constexpr size_t kWarningBytes = 160;
char g_warnings[kMaxWarnings][kWarningBytes];
size_t g_warning_count = 0;

__attribute__((format(printf, 1, 2))) void config_warning(const char* fmt, ...) {
    char overflow[kWarningBytes]; // past kMaxWarnings: logged only
    char* text = g_warning_count < kMaxWarnings ? g_warnings[g_warning_count++] : overflow;
    ktl::Formatter f(text, kWarningBytes);
    va_list ap;
    va_start(ap, fmt);
    f.vappend(fmt, ap);
    va_end(ap);
    KLOG_WARN("mcp: %s", text);
}

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
    size_t n = allowlist(
        bootargs::get().tools, defaults, [](const mcp::Tool& t) { return t.name; }, g_allow);
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
    auto uri_template = [](const mcp::ResourceTemplate& t) { return t.uri_template; };
    if (!conformance_profile()) {
        // A configured list names templates by their URI template; by default all are listed.
        size_t n = allowlist(bootargs::get().resources, kernel_resources(), uri, g_resource_allow);
        if (bootargs::get().resources.empty())
            n += allowlist({}, kernel_resource_templates(), uri_template, g_resource_allow + n);
        return n;
    }
    size_t n = allowlist(bootargs::get().resources, mcp::fixtures::resources(), uri, g_resource_allow);
    if (bootargs::get().resources.empty())
        n += allowlist({}, mcp::fixtures::resource_templates(), uri_template, g_resource_allow + n);
    return n;
}

// The secret is never logged: only the outcome and, on success, who the key stands for.
void installed(ktl::Result<uint16_t> id, const char* argument, const char* expected, const char* how) {
    if (!id)
        config_warning("a %s boot argument was refused (%s); expected %s", argument, ktl::error_name(id.error()),
                       expected);
    else if (const auto* p = g_keys.by_id(*id))
        KLOG_INFO("mcp: API key%s for principal '%s' (%s) installed", how, p->name, mcp::role_name(p->role));
}

void add_key(std::string_view spec, void*) {
    installed(g_keys.add_spec(spec), "key=", "ROLE:SECRET or ROLE:PRINCIPAL:SECRET, secret 16..256 bytes", "");
}

void add_key_sha256(std::string_view spec, void*) {
    installed(g_keys.add_spec_sha256(spec), "key_sha256=", "ROLE:[PRINCIPAL:]SHA256-HEX", " (by its SHA-256)");
}

// `limit=PRINCIPAL:LIST`: a keyed principal's or a line's own overrides. Values looser than the
// appliance's limits are kept but have no effect (only the smaller value ever applies).
void add_limit(std::string_view spec, void*) {
    std::string_view name;
    mcp::PrincipalLimits limits;
    if (!mcp::parse_limit_spec(spec, name, limits)) {
        config_warning("limit=%.*s refused; keys: time_ms, output_bytes, memory_bytes, syscalls, rate=B/S, concurrency",
                       static_cast<int>(spec.size() < 48 ? spec.size() : 48), spec.data());
        return;
    }
    bool line = false;
    for (auto n : kLineNames)
        line = line || n == name;
    // Whose limits these tighten: the role's own bucket, not the largest.
    mcp::Role role = name == kLineNames[0] ? mcp::parse_role(bootargs::get().serial_role).value_or(mcp::Role::Admin)
                                           : mcp::parse_role(bootargs::get().http_role).value_or(mcp::Role::Anonymous);
    if (line) {
        size_t i = 0;
        while (i < g_line_limit_count && g_line_limits[i].name != name)
            ++i;
        if (i == g_line_limit_count)
            ++g_line_limit_count;
        g_line_limits[i] = { name, limits };
    } else if (auto p = g_keys.set_limits(name, limits); !p) {
        config_warning("limit= names '%.*s', which no key= defines; ignored",
                       static_cast<int>(name.size() < 32 ? name.size() : 32), name.data());
        return;
    } else {
        role = (*p)->role;
        if (limits.has_scopes && (limits.scopes & ~mcp::scopes_of(role)) != 0)
            config_warning("limit= for '%s' names scopes its role (%s) does not have; they are not granted", (*p)->name,
                           mcp::role_name(role));
    }
    uint64_t wall = bootargs::get().tool_time_ms ? uint64_t(bootargs::get().tool_time_ms) * 1000000
                                                 : kDefaultWallLimitNs;
    size_t output = bootargs::get().tool_output_bytes ? bootargs::get().tool_output_bytes : kToolOutputLimit;
    if (mcp::loosens(limits, mcp::for_role(limit_config(), role), { wall, output, kToolHeapLimit, kToolSyscallLimit }))
        config_warning("limit= for '%.*s' asks for more than the appliance allows; those values have no effect",
                       static_cast<int>(name.size()), name.data());
    KLOG_INFO("mcp: limits for '%.*s': time %u ms, output %u bytes, memory %u bytes, %u syscalls, rate %u/%u, "
              "concurrency %u (0: default)",
              static_cast<int>(name.size()), name.data(), limits.time_ms, limits.output_bytes, limits.memory_bytes,
              limits.syscalls, limits.burst, limits.per_second, limits.concurrency);
}

// Refusals also go to the kernel log (and so to a client that asked for log messages). The name
// comes from the request: cut at a UTF-8 boundary so the record stays valid text.
void log_refusal(const mcp::AuditEvent& e, bool written) {
    if (!written || e.outcome == mcp::AuditOutcome::Allow)
        return;
    size_t n = ktl::utf8_prefix(e.name, 48);
    KLOG_NOTICE("mcp: %s %s '%.*s' for %s over %s: %s", mcp::audit_outcome_name(e.outcome),
                mcp::audit_kind_name(e.kind), static_cast<int>(n), e.name.data(),
                e.principal ? e.principal->name : "anonymous", e.transport, e.code);
}

} // namespace

// Tool actions that change the store.
bool changes_store(std::string_view action) {
    return action == "write" || action == "delete" || action == "create" || action == "drop" || action == "import" ||
           action == "approve";
}

// A refusal repeated in a burst is counted into the trail, not logged again each time.
void audit_decision(const mcp::AuditEvent& e) { log_refusal(e, audit::trail::record(e)); }
void audit_decision(const mcp::AuditEvent& e, uint32_t audit_slot) {
    log_refusal(e, audit::trail::record(e, audit_slot));
}

void bridge_config_init() {
    bootargs::for_each_key(add_key, nullptr);
    bootargs::for_each_key_sha256(add_key_sha256, nullptr);
    bootargs::for_each_limit(add_limit, nullptr); // after the keys: it names their principals
    g_allow_count = build_allowlist();
    g_resource_allow_count = build_resource_allowlist();
    if (const auto list = bootargs::get().step_up; !list.empty() && !mcp::SinkRules().add_sinks(list))
        config_warning("step_up=%.*s names something that is not a sink (delete, write, create); ignored",
                       static_cast<int>(list.size() < 48 ? list.size() : 48), list.data());
    if (conformance_profile()) {
        g_prompt_allow_count = allowlist(
            bootargs::get().prompts, mcp::fixtures::prompts(), [](const mcp::Prompt& p) { return p.name; },
            g_prompt_allow);
        KLOG_WARN("mcp: profile=conformance: test fixtures served to every caller");
    }
}

const mcp::KeyStore& api_keys() { return g_keys; }

std::span<const char[160]> config_warnings() {
    static_assert(kWarningBytes == 160);
    return { g_warnings, g_warning_count };
}

mcp::LimitConfig limit_config() {
    const auto& args = bootargs::get();
    if (args.rate_set) // one bucket size for every role
        return { args.rate_burst, args.rate_per_second, static_cast<uint32_t>(kMaxCalls), false };
    mcp::RoleRate top = mcp::role_rate(mcp::Role::Admin); // the largest; each role takes its own
    return { top.burst, top.per_second, static_cast<uint32_t>(kMaxCalls), true };
}

namespace {
uint64_t g_limiter_daif = 0;
} // namespace

mcp::CallLimiter& call_limiter() {
    // The bridges are tasks on one core: masking interrupts keeps the other one out. The saved
    // state lives in one place because the section never nests.
    static mcp::CallLimiter limiter(limit_config(), { [] {
                                                         uint64_t daif = READ_SYSREG(daif);
                                                         arch::irq_disable();
                                                         g_limiter_daif = daif;
                                                     },
                                                      [] { WRITE_SYSREG(daif, g_limiter_daif); } });
    return limiter;
}

mcp::ServerConfig base_server_config() {
    mcp::ServerConfig config;
    config.version = kVersion;
    config.source_commit = kSourceCommit;
    config.tools = all_tools();
    config.allowlist = std::span<const std::string_view>(g_allow, g_allow_count);
    config.resources = kernel_resources();
    config.resource_allowlist = std::span<const std::string_view>(g_resource_allow, g_resource_allow_count);
    config.resource_templates = kernel_resource_templates();
    if (conformance_profile()) {
        // The suite's fixtures, reachable by every caller (it sends no credentials); the kernel's
        // resources are not served, and one list page holds every fixture.
        config.resources = mcp::fixtures::resources();
        config.resource_templates = mcp::fixtures::resource_templates();
        config.prompts = mcp::fixtures::prompts();
        config.prompt_allowlist = std::span<const std::string_view>(g_prompt_allow, g_prompt_allow_count);
        config.anonymous_scopes = mcp::kConformanceFixtures;
    }
    if (bootargs::get().list_page)
        config.page_size = bootargs::get().list_page;
    config.keys = &g_keys;
    // Each bridge seals its own input rounds' requestState (request_state.h) with 32 bytes from
    // the kernel's generator; it lives as long as the bridge. Without memory, no rounds.
    constexpr size_t kStateKey = 32;
    if (auto mem = kheap::alloc(kStateKey)) {
        auto* key = static_cast<uint8_t*>(*mem);
        if (sys::random_bytes(key, kStateKey) == int64_t(kStateKey))
            config.state_key = { key, kStateKey };
    }
    return config;
}

const mcp::Principal* line_principal(mcp::Principal& p, const char* name, std::string_view role, mcp::Role fallback,
                                     uint16_t id) {
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof p.name; ++i)
        p.name[i] = name[i];
    p.name[i] = '\0';
    p.id = id;
    p.role = mcp::parse_role(role).value_or(fallback);
    p.scopes = mcp::scopes_of(p.role);
    p.limits = {};
    for (size_t k = 0; k < g_line_limit_count; ++k)
        if (g_line_limits[k].name == std::string_view(p.name))
            p.limits = g_line_limits[k].limits;
    if (p.limits.has_scopes) // only ever fewer than the role grants
        p.scopes &= p.limits.scopes;
    return p.role == mcp::Role::Anonymous ? nullptr : &p;
}

} // namespace mcpd

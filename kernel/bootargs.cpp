#include "bootargs.h"

#include <dtb/bootargs.h>
#include <ktl/decimal.h>

namespace bootargs {
namespace {
Config g_config;
std::string_view g_raw;
// The arguments are parsed from a copy of our own: the device tree that brought them is mapped
// read-only, and the cluster secret must be wiped from what the kernel keeps once it is used.
// Longer arguments than this stay where the firmware put them (and the secret with them).
char g_text[4096];
bool g_secret_forgotten = false;

// `0xADDR:BYTES` (hex address, page-aligned; decimal size 1 .. 64 MiB): false if it is not so.
bool parse_range(std::string_view s, uint64_t& base, uint64_t& bytes) {
    const size_t colon = s.find(':');
    if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || colon == std::string_view::npos || colon < 3 ||
        colon > 18)
        return false;
    uint64_t a = 0;
    for (size_t i = 2; i < colon; ++i) {
        const char c = s[i];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (d < 0)
            return false;
        a = a * 16 + static_cast<uint64_t>(d);
    }
    uint64_t n = 0;
    if (!ktl::parse_decimal(s.substr(colon + 1), n) || n == 0 || n > (64ull << 20) || (a & 4095) != 0 || a + n < a)
        return false;
    base = a;
    bytes = n;
    return true;
}

uint32_t parse_u32(std::string_view s, uint32_t fallback, uint32_t lo, uint32_t hi) {
    uint32_t v;
    if (!ktl::parse_decimal(s, v))
        return fallback;
    return v < lo || v > hi ? fallback : v;
}
} // namespace

void parse(std::string_view args) {
    if (args.size() <= sizeof g_text) {
        for (size_t i = 0; i < args.size(); ++i)
            g_text[i] = args[i];
        args = std::string_view(g_text, args.size());
    }
    g_raw = args;
    g_secret_forgotten = false;
    g_config.semihosting = dtb::bootarg_flag(args, "semihosting");
    g_config.panic_halt = dtb::bootarg_value(args, "panic").value_or("") == "halt";
    g_config.fault = dtb::bootarg_value(args, "fault").value_or("");
    g_config.tick_hz = parse_u32(dtb::bootarg_value(args, "hz").value_or(""), 100, 10, 1000);
    g_config.quiet = dtb::bootarg_flag(args, "quiet");
    g_config.netcheck = dtb::bootarg_flag(args, "netcheck");
    g_config.ip = dtb::bootarg_value(args, "ip").value_or("");
    g_config.ip1 = dtb::bootarg_value(args, "ip1").value_or("");
    g_config.tcp_echo_port = static_cast<uint16_t>(
        parse_u32(dtb::bootarg_value(args, "tcp_echo").value_or(""), 0, 1, 65535));
    auto http = dtb::bootarg_value(args, "http").value_or("");
    g_config.http_port = http == "off" ? 0 : static_cast<uint16_t>(parse_u32(http, 8080, 1, 65535));
    g_config.http_role = dtb::bootarg_value(args, "http_role").value_or("anonymous");
    g_config.http_hosts = dtb::bootarg_value(args, "http_hosts").value_or("");
    g_config.ktest = dtb::bootarg_value(args, "ktest").value_or("");
    g_config.ntp = dtb::bootarg_value(args, "ntp").value_or("");
    // 2001-09-09 .. 2286-11-20: ten digits, so nothing shorter passes for a date.
    uint64_t clock_unix = 0;
    auto clock_arg = dtb::bootarg_value(args, "clock").value_or("");
    if (clock_arg.size() == 10 && ktl::parse_decimal(clock_arg, clock_unix))
        g_config.clock_unix = static_cast<int64_t>(clock_unix);
    g_config.mcp_serial = dtb::bootarg_value(args, "mcp").value_or("") == "serial";
    g_config.disk_off = dtb::bootarg_value(args, "disk").value_or("") == "off";
    g_config.recovery_links_inline = dtb::bootarg_value(args, "recovery_links").value_or("") == "inline";
    g_config.checkpoint_kib = parse_u32(dtb::bootarg_value(args, "checkpoint_kib").value_or(""), 0, 1, 1048576);
    g_config.tools = dtb::bootarg_value(args, "tools").value_or("");
    g_config.serial_role = dtb::bootarg_value(args, "serial_role").value_or("admin");
    g_config.resources = dtb::bootarg_value(args, "resources").value_or("");
    g_config.prompts = dtb::bootarg_value(args, "prompts").value_or("");
    g_config.profile = dtb::bootarg_value(args, "profile").value_or("");
    g_config.tool_time_ms = parse_u32(dtb::bootarg_value(args, "tool_time_ms").value_or(""), 0, 1, 10000);
    g_config.list_page = parse_u32(dtb::bootarg_value(args, "list_page").value_or(""), 0, 1, 64);
    if (auto rate = dtb::bootarg_value(args, "rate")) {
        size_t slash = rate->find('/');
        if (slash != std::string_view::npos) {
            g_config.rate_burst = parse_u32(rate->substr(0, slash), 50, 1, 1000000);
            g_config.rate_per_second = parse_u32(rate->substr(slash + 1), 20, 1, 1000000);
            g_config.rate_set = true;
        }
    }
    g_config.audit_kib = parse_u32(dtb::bootarg_value(args, "audit_kib").value_or(""), 0, 16, 1024);
    g_config.step_up = dtb::bootarg_value(args, "step_up").value_or("");
    g_config.step_up_delete_over = parse_u32(dtb::bootarg_value(args, "step_up_delete_over").value_or(""), 100, 0, 100);
    g_config.node = dtb::bootarg_value(args, "node").value_or("");
    g_config.cluster = dtb::bootarg_value(args, "cluster").value_or("");
    g_config.peers = dtb::bootarg_value(args, "peers").value_or("");
    g_config.raft_voters = dtb::bootarg_value(args, "raft_voters").value_or("");
    g_config.raft_snapshot_every = parse_u32(dtb::bootarg_value(args, "raft_snapshot_every").value_or(""), 96, 4, 96);
    g_config.raft_replace_after_s = parse_u32(dtb::bootarg_value(args, "raft_replace_after_s").value_or(""), 0, 10,
                                              86400);
    g_config.model_base = g_config.model_bytes = 0;
    if (!parse_range(dtb::bootarg_value(args, "model").value_or(""), g_config.model_base, g_config.model_bytes))
        g_config.model_base = g_config.model_bytes = 0;
    g_config.raft_groups = parse_u32(dtb::bootarg_value(args, "raft_groups").value_or(""), 1, 0, 1) == 1;
    g_config.cluster_port = static_cast<uint16_t>(
        parse_u32(dtb::bootarg_value(args, "cluster_port").value_or(""), 7946, 1, 65535));
    g_config.cluster_period_ms = parse_u32(dtb::bootarg_value(args, "cluster_period_ms").value_or(""), 0, 100, 10000);
    g_config.cluster_suspicion_mult = parse_u32(dtb::bootarg_value(args, "cluster_suspicion").value_or(""), 0, 1, 20);
    g_config.cluster_broadcast = dtb::bootarg_value(args, "cluster_discovery").value_or("") != "off";
    g_config.tool_output_bytes = parse_u32(dtb::bootarg_value(args, "tool_output_bytes").value_or(""), 0, 256, 65536);
}

size_t redacted(char* out, size_t cap) {
    if (cap == 0)
        return 0;
    size_t n = 0;
    auto put = [&](char c) {
        if (n + 1 < cap)
            out[n++] = c;
    };
    size_t i = 0;
    while (i < g_raw.size()) {
        // `key=ROLE:...`: keep the role, hide the rest of the token; `cluster_key=`: hide it all.
        bool at_token = i == 0 || g_raw[i - 1] == ' ' || g_raw[i - 1] == '\t' || g_raw[i - 1] == '\n';
        bool api_key = at_token && g_raw.substr(i, 4) == "key=";
        bool cluster_key = at_token && g_raw.substr(i, 12) == "cluster_key=";
        if (api_key || cluster_key) {
            size_t end = i;
            while (end < g_raw.size() && g_raw[end] != ' ' && g_raw[end] != '\t' && g_raw[end] != '\n')
                ++end;
            size_t colon = g_raw.substr(i, end - i).find(':');
            size_t keep = cluster_key ? 12 : colon == std::string_view::npos ? 4 : colon + 1;
            for (size_t k = 0; k < keep; ++k)
                put(g_raw[i + k]);
            for (char c : std::string_view("***"))
                put(c);
            i = end;
            continue;
        }
        put(g_raw[i++]);
    }
    out[n] = '\0';
    return n;
}

std::string_view cluster_secret() {
    return g_secret_forgotten ? std::string_view() : dtb::bootarg_value(g_raw, "cluster_key").value_or("");
}

void forget_cluster_secret() {
    g_secret_forgotten = true;
    if (g_raw.data() != g_text)
        return;
    // Overwritten in place, to its length: every other view into the arguments stays valid.
    for (size_t i = 0; i + 12 <= g_raw.size(); ++i) {
        const bool at_token = i == 0 || g_raw[i - 1] == ' ' || g_raw[i - 1] == '\t' || g_raw[i - 1] == '\n';
        if (!at_token || g_raw.substr(i, 12) != "cluster_key=")
            continue;
        for (size_t k = i + 12; k < g_raw.size() && g_text[k] != ' ' && g_text[k] != '\t' && g_text[k] != '\n'; ++k)
            g_text[k] = '*';
    }
}

void for_each_key(void (*fn)(std::string_view spec, void* ctx), void* ctx) {
    dtb::bootarg_values(g_raw, "key", fn, ctx);
}

void for_each_key_sha256(void (*fn)(std::string_view spec, void* ctx), void* ctx) {
    dtb::bootarg_values(g_raw, "key_sha256", fn, ctx);
}

void for_each_limit(void (*fn)(std::string_view spec, void* ctx), void* ctx) {
    dtb::bootarg_values(g_raw, "limit", fn, ctx);
}

const Config& get() { return g_config; }
std::string_view raw() { return g_raw; }

} // namespace bootargs

#include "bootargs.h"

#include <dtb/bootargs.h>

namespace bootargs {
namespace {
Config g_config;
std::string_view g_raw;

uint32_t parse_u32(std::string_view s, uint32_t fallback, uint32_t lo, uint32_t hi) {
    if (s.empty() || s.size() > 9)
        return fallback;
    uint32_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return fallback;
        v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    return v < lo || v > hi ? fallback : v;
}
} // namespace

void parse(std::string_view args) {
    g_raw = args;
    g_config.semihosting = dtb::bootarg_flag(args, "semihosting");
    g_config.panic_halt = dtb::bootarg_value(args, "panic").value_or("") == "halt";
    g_config.fault = dtb::bootarg_value(args, "fault").value_or("");
    g_config.tick_hz = parse_u32(dtb::bootarg_value(args, "hz").value_or(""), 100, 10, 1000);
    g_config.quiet = dtb::bootarg_flag(args, "quiet");
    g_config.ktest = dtb::bootarg_value(args, "ktest").value_or("");
    g_config.mcp_serial = dtb::bootarg_value(args, "mcp").value_or("") == "serial";
    g_config.tools = dtb::bootarg_value(args, "tools").value_or("");
    g_config.serial_role = dtb::bootarg_value(args, "serial_role").value_or("admin");
}

const Config& get() { return g_config; }
std::string_view raw() { return g_raw; }

} // namespace bootargs

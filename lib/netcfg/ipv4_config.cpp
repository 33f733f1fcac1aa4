#include "ipv4_config.h"

#include <ktl/decimal.h>

#include <cstdio>

namespace netcfg {

ktl::Result<uint32_t> parse_ipv4(std::string_view text) {
    uint32_t value = 0;
    size_t pos = 0;
    for (int octet = 0; octet < 4; ++octet) {
        if (octet > 0) {
            if (pos >= text.size() || text[pos] != '.')
                return ktl::Error::InvalidArgs;
            ++pos;
        }
        uint32_t part = 0;
        size_t digits = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && digits < 4) {
            part = part * 10 + static_cast<uint32_t>(text[pos] - '0');
            ++pos;
            ++digits;
        }
        if (digits == 0 || digits > 3 || part > 255)
            return ktl::Error::InvalidArgs;
        value = value << 8 | part;
    }
    if (pos != text.size())
        return ktl::Error::InvalidArgs;
    return value;
}

ktl::Result<Ipv4Config> parse_ip_arg(std::string_view value) {
    Ipv4Config cfg;
    if (value.empty() || value == "dhcp")
        return cfg;
    std::string_view rest;
    bool has_rest = false;
    if (size_t comma = value.find(','); comma != std::string_view::npos) {
        rest = value.substr(comma + 1);
        value = value.substr(0, comma);
        has_rest = true;
    }
    size_t slash = value.find('/');
    if (slash == std::string_view::npos)
        return ktl::Error::InvalidArgs;
    std::string_view prefix_text = value.substr(slash + 1);
    if (prefix_text.empty() || prefix_text.size() > 2)
        return ktl::Error::InvalidArgs;
    uint32_t prefix = 0;
    if (!ktl::parse_decimal(prefix_text, prefix))
        return ktl::Error::InvalidArgs;
    // /31 and /32 leave no room for a host beside a gateway on an Ethernet segment.
    if (prefix < 1 || prefix > 30)
        return ktl::Error::InvalidArgs;
    cfg.address = TRY(parse_ipv4(value.substr(0, slash)));
    cfg.prefix = static_cast<uint8_t>(prefix);
    cfg.netmask = ~0u << (32 - prefix);
    uint32_t host = cfg.address & ~cfg.netmask;
    if (host == 0 || host == ~cfg.netmask)
        return ktl::Error::InvalidArgs;
    if (has_rest) {
        if (rest.substr(0, 3) != "gw=")
            return ktl::Error::InvalidArgs;
        cfg.gateway = TRY(parse_ipv4(rest.substr(3)));
        uint32_t gw_host = cfg.gateway & ~cfg.netmask;
        if ((cfg.gateway & cfg.netmask) != (cfg.address & cfg.netmask) || gw_host == 0 || gw_host == ~cfg.netmask ||
            cfg.gateway == cfg.address)
            return ktl::Error::InvalidArgs;
    }
    cfg.dhcp = false;
    return cfg;
}

size_t format_ipv4(uint32_t a, char* out, size_t cap) {
    int n = snprintf(out, cap, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
    return n < 0 ? 0 : static_cast<size_t>(n) < cap ? static_cast<size_t>(n) : cap ? cap - 1 : 0;
}

} // namespace netcfg

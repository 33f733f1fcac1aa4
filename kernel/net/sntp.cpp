#include "sntp.h"

#include "../bootargs.h"
#include "../clock.h"
#include "../log.h"

#include <ktl/decimal.h>
#include <lwip/apps/sntp.h>
#include <lwip/ip_addr.h>
#include <netcfg/ipv4_config.h>

namespace {

uint16_t g_port = 123;

} // namespace

extern "C" unsigned short basalt_sntp_port(void) { return g_port; }

extern "C" void basalt_sntp_set_time(unsigned long sec, unsigned long usec) {
    // Before 2024 or past 2100 is no answer a working server gives: the clock stays as it is.
    if (sec < 1704067200ul || sec > 4102444800ul) {
        KLOG_WARN("sntp: the server's time (%lu s since 1970) is not believable; ignored", sec);
        return;
    }
    const int64_t before = clock::wall_clock_known() ? clock::unix_seconds() : 0;
    const bool first = clock::source() != clock::Source::Sntp;
    clock::set_wall_clock(static_cast<int64_t>(sec), clock::Source::Sntp);
    char now[32];
    clock::rfc3339_now(now, sizeof now);
    if (first)
        KLOG_INFO("sntp: clock set to %s (it was %s%lld s off)", now, before ? "" : "not set, ",
                  static_cast<long long>(before ? static_cast<int64_t>(sec) - before : 0));
    (void)usec;
}

extern "C" void basalt_sntp_get_time(unsigned long* sec, unsigned long* usec) {
    *sec = clock::wall_clock_known() ? static_cast<unsigned long>(clock::unix_seconds()) : 0;
    *usec = static_cast<unsigned long>((clock::monotonic_ns() / 1000) % 1000000);
}

namespace net {

void sntp_start() {
    std::string_view arg = bootargs::get().ntp;
    if (arg == "off")
        return;
    sntp_setoperatingmode(SNTP_OPMODE_POLL);
    if (!arg.empty()) {
        std::string_view host = arg;
        if (size_t colon = arg.find(':'); colon != std::string_view::npos) {
            host = arg.substr(0, colon);
            uint32_t port = 0;
            if (!ktl::parse_decimal(arg.substr(colon + 1), port) || port == 0 || port > 65535) {
                KLOG_ERROR("sntp: ntp=%.*s: the port must be 1..65535; no SNTP", static_cast<int>(arg.size()),
                           arg.data());
                return;
            }
            g_port = static_cast<uint16_t>(port);
        }
        auto address = netcfg::parse_ipv4(host);
        if (!address) {
            KLOG_ERROR("sntp: ntp=%.*s is not A.B.C.D[:PORT] or off; no SNTP", static_cast<int>(arg.size()),
                       arg.data());
            return;
        }
        ip_addr_t server;
        ip_addr_set_ip4_u32(&server, lwip_htonl(*address));
        sntp_servermode_dhcp(0);
        sntp_setserver(0, &server);
        KLOG_INFO("sntp: asking %.*s for the time", static_cast<int>(arg.size()), arg.data());
    } else {
        sntp_servermode_dhcp(1); // a server named by the DHCP lease (option 42), if any
    }
    sntp_init();
}

} // namespace net

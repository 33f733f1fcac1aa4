#include "net_stack.h"
#include "sntp.h"

#include "net_status.h"
#include "tcp_echo.h"
#include "nic_netif.h"
#include "../bootargs.h"
#include "../log.h"

#include <drivers/nic.h>
#include <netcfg/ipv4_config.h>

#include <lwip/dhcp.h>
#include <lwip/init.h>
#include <lwip/netif.h>
#include <lwip/prot/dhcp.h>
#include <netif/ethernet.h>

namespace net {
namespace {

struct netif g_netif[kMaxInterfaces];
uint32_t g_logged_address[kMaxInterfaces] = {};

size_t index_of(const struct netif* netif) { return static_cast<size_t>(netif - g_netif); }

// vn0's address is the appliance's (net status, the HTTP Host check, the cluster's own address).
void publish(struct netif* netif) {
    Status status;
    uint32_t addr = lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(netif)));
    status.up = addr != 0;
    status.dhcp = status.up && dhcp_supplied_address(netif);
    status.address = addr;
    status.netmask = lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(netif)));
    status.gateway = lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(netif)));
    status.lease_s = status.dhcp ? netif_dhcp_data(netif)->offered_t0_lease : 0;
    publish_status(status);
}

void log_address(struct netif* netif) {
    const size_t i = index_of(netif);
    uint32_t addr = lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(netif)));
    if (i == 0)
        publish(netif);
    if (addr == g_logged_address[i])
        return;
    g_logged_address[i] = addr;
    char a[16], m[16], g[16];
    netcfg::format_ipv4(addr, a, sizeof a);
    netcfg::format_ipv4(lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(netif))), m, sizeof m);
    netcfg::format_ipv4(lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(netif))), g, sizeof g);
    if (addr == 0) {
        KLOG_NOTICE("net: vn%zu has no address", i);
        return;
    }
    if (dhcp_supplied_address(netif)) {
        const struct dhcp* d = netif_dhcp_data(netif);
        char s[16];
        netcfg::format_ipv4(lwip_ntohl(ip4_addr_get_u32(&d->server_ip_addr)), s, sizeof s);
        KLOG_INFO("net: vn%zu dhcp lease %s netmask %s gw %s from server %s, %lu s", i, a, m, g, s,
                  static_cast<unsigned long>(d->offered_t0_lease));
    } else {
        KLOG_INFO("net: vn%zu static address %s netmask %s gw %s", i, a, m, g);
    }
}

// SNTP starts once vn0 has an address (a request sent before would wait out its receive
// timeout for nothing).
void on_status(struct netif* netif) {
    log_address(netif);
    static bool sntp_started = false;
    if (!sntp_started && index_of(netif) == 0 && !ip4_addr_isany_val(*netif_ip4_addr(netif))) {
        sntp_started = true;
        sntp_start();
    }
}

struct netif* add_interface(size_t i, Nic& dev, std::string_view arg) {
    auto cfg = netcfg::parse_ip_arg(arg);
    if (!cfg) {
        // Without vn0 nothing runs: "the network", not just the interface, stays down.
        KLOG_ERROR("net: %s=%.*s is not dhcp or A.B.C.D/N[,gw=A.B.C.D]; %s stays down", i == 0 ? "ip" : "ip1",
                   static_cast<int>(arg.size()), arg.data(), i == 0 ? "the network" : "vn1");
        return nullptr;
    }
    struct netif* netif = &g_netif[i];
    ip4_addr_t addr, mask, gw;
    ip4_addr_set_u32(&addr, lwip_htonl(cfg->address));
    ip4_addr_set_u32(&mask, lwip_htonl(cfg->netmask));
    ip4_addr_set_u32(&gw, lwip_htonl(cfg->gateway));
    // NO_SYS: frames enter through ethernet_input directly, not through a tcpip thread.
    if (!netif_add(netif, &addr, &mask, &gw, &dev, nic_netif_init, ethernet_input)) {
        KLOG_ERROR("net: cannot add vn%zu", i);
        return nullptr;
    }
    netif_set_hostname(netif, "basalt");
    netif_set_status_callback(netif, on_status);
    if (i == 0)
        netif_set_default(netif);
    netif_set_link_up(netif);
    netif_set_up(netif);
    if (cfg->dhcp) {
        if (dhcp_start(netif) != ERR_OK)
            KLOG_ERROR("net: dhcp could not start on vn%zu", i);
        else
            KLOG_INFO("net: dhcp started on vn%zu", i);
    } else {
        on_status(netif); // a static address is there already
    }
    return netif;
}

} // namespace

bool stack_start(Nic* const* devs, size_t count, struct netif** out) {
    for (size_t i = 0; i < count; ++i)
        out[i] = nullptr;
    if (count == 0)
        return false;
    lwip_init();
    out[0] = add_interface(0, *devs[0], bootargs::get().ip);
    if (!out[0])
        return false;
    for (size_t i = 1; i < count && i < kMaxInterfaces; ++i)
        out[i] = add_interface(i, *devs[i], bootargs::get().ip1);
    if (uint16_t port = bootargs::get().tcp_echo_port; port && !tcp_echo_start(port))
        KLOG_ERROR("net: tcp echo cannot listen on port %u", port);
    return true;
}

} // namespace net

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

struct netif g_netif;
uint32_t g_logged_address = 0;

void log_address(struct netif* netif) {
    uint32_t addr = lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(netif)));
    Status status;
    status.up = addr != 0;
    status.dhcp = status.up && dhcp_supplied_address(netif);
    status.address = addr;
    status.netmask = lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(netif)));
    status.gateway = lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(netif)));
    status.lease_s = status.dhcp ? netif_dhcp_data(netif)->offered_t0_lease : 0;
    publish_status(status);
    if (addr == g_logged_address)
        return;
    g_logged_address = addr;
    char a[16], m[16], g[16];
    netcfg::format_ipv4(addr, a, sizeof a);
    netcfg::format_ipv4(lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(netif))), m, sizeof m);
    netcfg::format_ipv4(lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(netif))), g, sizeof g);
    if (addr == 0) {
        KLOG_NOTICE("net: %c%c%u has no address", netif->name[0], netif->name[1], netif->num);
        return;
    }
    if (dhcp_supplied_address(netif)) {
        const struct dhcp* d = netif_dhcp_data(netif);
        char s[16];
        netcfg::format_ipv4(lwip_ntohl(ip4_addr_get_u32(&d->server_ip_addr)), s, sizeof s);
        KLOG_INFO("net: dhcp lease %s netmask %s gw %s from server %s, %lu s", a, m, g, s,
                  static_cast<unsigned long>(d->offered_t0_lease));
    } else {
        KLOG_INFO("net: static address %s netmask %s gw %s", a, m, g);
    }
}

// SNTP starts once the interface has an address (a request sent before would wait out its
// receive timeout for nothing).
void on_status(struct netif* netif) {
    log_address(netif);
    static bool sntp_started = false;
    if (!sntp_started && !ip4_addr_isany_val(*netif_ip4_addr(netif))) {
        sntp_started = true;
        sntp_start();
    }
}

} // namespace

struct netif* stack_start(Nic& dev) {
    auto cfg = netcfg::parse_ip_arg(bootargs::get().ip);
    if (!cfg) {
        KLOG_ERROR("net: ip=%.*s is not dhcp or A.B.C.D/N[,gw=A.B.C.D]; the interface stays down",
                   static_cast<int>(bootargs::get().ip.size()), bootargs::get().ip.data());
        return nullptr;
    }
    lwip_init();
    ip4_addr_t addr, mask, gw;
    ip4_addr_set_u32(&addr, lwip_htonl(cfg->address));
    ip4_addr_set_u32(&mask, lwip_htonl(cfg->netmask));
    ip4_addr_set_u32(&gw, lwip_htonl(cfg->gateway));
    // NO_SYS: frames enter through ethernet_input directly, not through a tcpip thread.
    if (!netif_add(&g_netif, &addr, &mask, &gw, &dev, nic_netif_init, ethernet_input)) {
        KLOG_ERROR("net: cannot add the interface");
        return nullptr;
    }
    netif_set_hostname(&g_netif, "basalt");
    netif_set_status_callback(&g_netif, on_status);
    netif_set_default(&g_netif);
    netif_set_link_up(&g_netif);
    netif_set_up(&g_netif);
    if (cfg->dhcp) {
        if (dhcp_start(&g_netif) != ERR_OK)
            KLOG_ERROR("net: dhcp could not start");
        else
            KLOG_INFO("net: dhcp started on vn0");
    }
    if (uint16_t port = bootargs::get().tcp_echo_port; port && !tcp_echo_start(port))
        KLOG_ERROR("net: tcp echo cannot listen on port %u", port);
    if (!cfg->dhcp)
        on_status(&g_netif); // a static address is there already
    return &g_netif;
}

} // namespace net
